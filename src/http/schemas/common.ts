// Shared TypeBox schemas: the list envelope, summaries, app ids, timestamps.
import { Type, type TSchema } from 'typebox';
import { component, ref, type Component } from './components.js';

export { problems, JSON_BODY_PROBLEMS, Problem } from './components.js';

/** The list envelope `{metadata: {count}, data}` of every listing (docs/api.md), as component `name`. */
export const Envelope = <T extends TSchema>(name: string, item: Component<T>) =>
  component(
    name,
    Type.Object(
      {
        metadata: Type.Object({ count: Type.Integer({ description: 'The number of items in data' }) }),
        data: Type.Array(ref(item)),
      },
      { description: `A list of ${item.$id}` },
    ),
  );

export const UserSummary = component(
  'UserSummary',
  Type.Object({
    userId: Type.Integer(),
    displayName: Type.String(),
    email: Type.String(),
  }),
);

export const WorkspaceSummary = component(
  'WorkspaceSummary',
  Type.Object({
    workspaceId: Type.Integer(),
    displayName: Type.String(),
  }),
);

/** An app id in an answer, under the interface's name and the one DXAPI clients read. */
export const AppIdFields = {
  platformAppId: Type.String(),
  movementAppId: Type.String({ description: 'The same as platformAppId (the name DXAPI clients use)' }),
};

/** An app named in a request: platformAppId, or movementAppId as DXAPI clients send it. */
export const AppIdRefFields = {
  platformAppId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  movementAppId: Type.Optional(
    Type.String({ minLength: 1, maxLength: 64, description: 'Alias of platformAppId (DXAPI clients)' }),
  ),
};

export const Timestamp = Type.String({ description: 'ISO 8601, UTC, no zone suffix, microseconds' });

/** An answer without a body (204, 308). */
export const NoContent = (description: string) => ({ type: 'null', description }) as const;
