// What an editor shows of the client's types: the resources by name (`Dataset`, `Job`), not their
// expanded shapes; records<T>() yields the caller's record type; the document's closed sets are
// closed for the compiler (a property type the service refuses does not compile).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const CLIENT_TYPES = fileURLToPath(new URL('../../../packages/client/dist/index.d.ts', import.meta.url));

const USE = `
import { DxClient, isDxProblem } from '@dataset-exchange/client';
declare const dx: DxClient;
interface Voter { id: number; name: string }
export const me = await dx.me();
export const dataset = await dx.getDataset('d');
export const datasets = await dx.listDatasets();
export const job = await dx.getJob('j');
export const jobs = await dx.listJobs('d');
export const entry = job.currentStatus;
export const progress = job.progress;
export const log = entry.logData;
export const started = await dx.loadFromUrl('d', 'https://files.test/a.csv');
export const voters = dx.records<Voter>('d');
export const rows = dx.records('d');
export const changes: Parameters<DxClient['updateDataset']>[1] = { name: 'n' };
export async function codeOf(err: unknown) {
  if (isDxProblem(err, 'dataset_not_empty')) return err.code;
  return undefined;
}
// @ts-expect-error: the service refuses this property type, and so does the compiler
await dx.createDataset({ name: 'n', schema: { properties: [{ name: 'a', type: 'int' }] } });
// @ts-expect-error: not a code of the catalogue
isDxProblem(new Error(), 'no_such_code');
`;

test("the client's types are named in hovers, records<T>() takes the record type, closed sets are closed", () => {
  const dir = mkdtempSync(join(tmpdir(), 'dx-client-hovers-'));
  try {
    const file = join(dir, 'use.mts'); // a module: top-level await
    writeFileSync(file, USE);
    const program = ts.createProgram([file], {
      strict: true,
      noEmit: true,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      skipLibCheck: true,
      paths: { '@dataset-exchange/client': [CLIENT_TYPES] },
    });
    const diagnostics = ts
      .getPreEmitDiagnostics(program)
      .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    assert.deepEqual(diagnostics, []);
    const checker = program.getTypeChecker();
    const source = program.getSourceFile(file);
    assert.ok(source);
    const shown: Record<string, string> = {};
    source.forEachChild((node) => {
      if (!ts.isVariableStatement(node)) return;
      for (const decl of node.declarationList.declarations) {
        shown[decl.name.getText(source)] = checker.typeToString(checker.getTypeAtLocation(decl.name));
      }
    });
    assert.deepEqual(shown, {
      dx: 'DxClient',
      me: 'Me',
      dataset: 'Dataset',
      datasets: 'Dataset[]',
      job: 'Job',
      jobs: 'Job[]',
      entry: 'JobStatusEntry',
      progress: 'JobProgress | null',
      log: 'JobLog | null',
      started: 'LoadJobStarted',
      voters: 'AsyncGenerator<Voter, any, any>',
      rows: 'AsyncGenerator<DatasetRecord, any, any>',
      changes: 'DatasetChanges',
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
