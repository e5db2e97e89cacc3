// Which environment variables a deployment may hand the service: the settings src/config.ts reads,
// and the AWS SDK's own credential variables.
import { ENV_NAMES } from '../../src/config.js';

/** Read by the AWS SDK's default credential chain, not by config.ts. */
export const AWS_SDK_VARIABLES = ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY'];

/** Whether `name` is a variable the service (or its S3 client) reads. */
export function isKnownVariable(name: string): boolean {
  return (ENV_NAMES as readonly string[]).includes(name) || AWS_SDK_VARIABLES.includes(name);
}

/** Settings that are secrets: they belong in a Secret (or compose's .env), never in a ConfigMap. */
export const SECRET_SETTINGS = [
  'SIGNING_SECRET',
  'DATABASE_URL',
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
  'S3_NOTIFICATION_TOKEN',
];
