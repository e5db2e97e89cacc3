import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { GroupInsert } from './group-insert.js';

/** A writer that records each statement's rows and refuses the rows `refuse` names. */
function recordingWriter(refuse: (row: number) => boolean = () => false) {
  const statements: number[][] = [];
  let release: (() => void) | null = null;
  let held = false;
  return {
    statements,
    /** Holds the next write until `resume()`. */
    hold: () => {
      held = true;
    },
    resume: () => {
      held = false;
      release?.();
    },
    write: async (rows: number[]) => {
      statements.push([...rows]);
      if (held) await new Promise<void>((resolve) => (release = resolve));
      if (rows.some(refuse)) throw new Error(`refused ${rows.filter(refuse).join(',')}`);
    },
  };
}

void describe('GroupInsert', () => {
  void it('writes the rows of one turn of the event loop in one statement', async () => {
    const w = recordingWriter();
    const group = new GroupInsert(w.write);
    await Promise.all([1, 2, 3].map((n) => group.insert(n)));
    assert.deepEqual(w.statements, [[1, 2, 3]]);
  });

  void it('answers no caller before its row is written, and groups the rows that came meanwhile', async () => {
    const w = recordingWriter();
    const group = new GroupInsert(w.write);
    w.hold();
    let firstDone = false;
    const first = group.insert(1).then(() => (firstDone = true));
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(w.statements, [[1]]);
    const later = [group.insert(2), group.insert(3)];
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(firstDone, false);
    assert.deepEqual(w.statements, [[1]]);
    w.resume();
    await Promise.all([first, ...later]);
    assert.deepEqual(w.statements, [[1], [2, 3]]);
  });

  void it('fails only the caller whose row is refused: a refused group is written row by row', async () => {
    const w = recordingWriter((row) => row === 2);
    const group = new GroupInsert(w.write);
    const outcomes = await Promise.allSettled([1, 2, 3].map((n) => group.insert(n)));
    assert.deepEqual(
      outcomes.map((o) => o.status),
      ['fulfilled', 'rejected', 'fulfilled'],
    );
    assert.match(String((outcomes[1] as PromiseRejectedResult).reason), /refused 2/);
    assert.deepEqual(w.statements, [[1, 2, 3], [1], [2], [3]]);
  });

  void it('splits a large group into statements of at most 500 rows', async () => {
    const w = recordingWriter();
    const group = new GroupInsert(w.write);
    await Promise.all(Array.from({ length: 1201 }, (_, i) => group.insert(i)));
    assert.deepEqual(
      w.statements.map((s) => s.length),
      [500, 500, 201],
    );
    assert.deepEqual(
      w.statements.flat(),
      Array.from({ length: 1201 }, (_, i) => i),
    );
  });

  void it('starts a new group after the last one is written', async () => {
    const w = recordingWriter();
    const group = new GroupInsert(w.write);
    await group.insert(1);
    await group.insert(2);
    assert.deepEqual(w.statements, [[1], [2]]);
  });
});
