// The proxy as the benchmark runs it: its own process, configured from the environment, access log
// to stdout (the bench points stdout at a file), and one "ready <url>" line on stderr.
import { loadConfig } from '../src/config.js';
import { runProxyRole } from '../src/proxy/cluster.js';
import { openDatabase } from '../src/storage/db/database.js';
import { migrateToLatest } from '../src/storage/db/migrate.js';

const config = loadConfig();
const database = await openDatabase(config.databaseUrl);
await migrateToLatest(database);
const role = await runProxyRole(config, { database });
process.stderr.write(`ready ${role.url}\n`);
const stop = () =>
  void role
    .close()
    .then(() => database.close())
    .finally(() => process.exit(0));
process.once('SIGTERM', stop).once('SIGINT', stop);
