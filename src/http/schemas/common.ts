// Shared TypeBox schemas: the list envelope, problem bodies, summaries.
import { Type, type TSchema } from 'typebox';

/** The list envelope `{metadata: {count, …}, data}` of every listing (docs/api.md). */
export const Envelope = <T extends TSchema>(item: T) =>
  Type.Object({
    metadata: Type.Object({ count: Type.Integer() }),
    data: Type.Array(item),
  });

/** RFC 9457 problem-details, as every error of the service is rendered. */
export const Problem = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    errors: Type.Record(Type.String(), Type.Array(Type.String())),
    source: Type.String(),
    traceId: Type.String(),
  },
  { description: 'application/problem+json (RFC 9457)' },
);

export const UserSummary = Type.Object({
  userId: Type.Integer(),
  displayName: Type.String(),
  email: Type.String(),
});

export const WorkspaceSummary = Type.Object({
  workspaceId: Type.Integer(),
  displayName: Type.String(),
});

/** Problem responses a route can answer, by status. */
export function problems(...statuses: number[]): Record<number, typeof Problem> {
  return Object.fromEntries(statuses.map((s) => [s, Problem]));
}

/** An app id in an answer, under the interface's name and the one DXAPI clients read. */
export const AppIdFields = {
  platformAppId: Type.String(),
  movementAppId: Type.String({ description: 'The same as platformAppId (the name DXAPI clients use)' }),
};

/** An app named in a request: platformAppId, or movementAppId as DXAPI clients send it. */
export const AppIdRef = Type.Object({
  platformAppId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  movementAppId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
});

export const Timestamp = Type.String({ description: 'ISO 8601, UTC, no zone suffix, microseconds' });
