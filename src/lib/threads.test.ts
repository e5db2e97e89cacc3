// A thread's young generation stays small even in a process started with a large semi-space, while
// the event loop's keeps the size it was given.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';

test("a thread's young generation is held small under --max-semi-space-size; the event loop's keeps its size", () => {
  // A child started as the service is, whose thread allocates what an export's rendering does.
  const script = `
    import { startThread, THREAD_YOUNG_GENERATION_MB } from ${JSON.stringify(new URL('./threads.js', import.meta.url).href)};
    import { getHeapSpaceStatistics } from 'node:v8';
    const newSpace = () => getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size;
    const churn = 'let k = []; for (let i = 0; i < 3e6; i++) { k.push({ i, s: "x" + i }); if (k.length > 1000) k = []; }';
    const worker = startThread(new URL('data:text/javascript,' + encodeURIComponent(
      "import { parentPort } from 'node:worker_threads';" + churn + "parentPort.postMessage('done'); setInterval(() => {}, 1000);")), null);
    await new Promise((resolve) => worker.once('message', resolve));
    const thread = (await worker.getHeapStatistics()).total_heap_size;
    await worker.terminate();
    new Function(churn)();
    console.log(JSON.stringify({ thread, limit: THREAD_YOUNG_GENERATION_MB * 2 ** 20, main: newSpace() }));
  `;
  const child = spawnSync(
    process.execPath,
    ['--max-semi-space-size=16', '--input-type=module', '-e', script],
    {
      encoding: 'utf8',
    },
  );
  assert.equal(child.status, 0, child.stderr);
  const { thread, limit, main } = JSON.parse(child.stdout) as { thread: number; limit: number; main: number };
  // The thread's whole heap (old generation and code included) stays under what the event loop's
  // young generation alone may take (unheld, the thread's grew to 3 × 16 MiB)…
  assert.ok(thread < 2 * 16 * 2 ** 20, `thread heap ${thread} bytes, young generation limit ${limit}`);
  // …while the event loop's new space still grows to its two semi-spaces of 16 MiB.
  assert.equal(main, 2 * 16 * 2 ** 20);
});
