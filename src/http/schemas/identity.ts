// Schemas of installations, client tokens and /auth/me.
import { Type } from 'typebox';
import { PERMISSIONS, type Permission } from '../../domain/identity/access-tokens.js';
import { WORKSPACE_TYPES, type WorkspaceType } from '../../domain/identity/workspaces.js';
import { problem } from '../../errors.js';
import { checkedEnum, component, ref } from './components.js';
import { AppIdFields, Envelope, Timestamp, UserSummary } from './common.js';

export const Installation = component(
  'Installation',
  Type.Object(
    {
      installationId: Type.Integer(),
      ...AppIdFields,
      workspaceId: Type.Integer(),
      createdBy: ref(UserSummary),
      dateCreated: Timestamp,
      name: Type.String(),
    },
    { description: "The app's connection to one workspace" },
  ),
);

export const InstallationList = Envelope('InstallationList', Installation);

/** Largest id an integer column holds on both engines. */
const MAX_ID = 2147483647;

export const ConnectInstallationBody = component(
  'ConnectInstallationRequest',
  Type.Object({
    workspaceId: Type.Integer({ minimum: 1, maximum: MAX_ID }),
    workspaceKey: Type.String({ minLength: 1, maxLength: 200 }),
  }),
);

export const ClientTokenBody = component(
  'ClientTokenRequest',
  Type.Object({
    tokenType: Type.Optional(
      Type.Union([Type.Literal('appInstallation'), Type.Null()], {
        description: 'absent or null: appInstallation',
      }),
    ),
    installationId: Type.Union(
      [Type.Integer({ minimum: 1, maximum: MAX_ID }), Type.String({ pattern: '^[1-9][0-9]{0,9}$' })],
      { description: 'an integer, or its digits as a string (as DXAPI clients send it)' },
    ),
    workspaceKey: Type.String({ minLength: 1, maxLength: 200 }),
    permissions: Type.Optional(
      Type.Union([Type.Array(checkedEnum(PERMISSIONS, { maxLength: 64 }), { maxItems: 16 }), Type.Null()], {
        description: 'absent, null or empty: every permission (of the calling token, when it is one)',
      }),
    ),
  }),
);

/** The installation id of a client-token request, digits or integer; 400 beyond the column's range. */
export function installationIdOf(value: number | string): number {
  const id = Number(value);
  if (!Number.isSafeInteger(id) || id < 1 || id > MAX_ID) {
    throw problem('invalid', 'installationId is not a valid installation id.', {
      errors: { installationId: [`must be an integer from 1 to ${MAX_ID}`] },
    });
  }
  return id;
}

export const ClientToken = component(
  'ClientToken',
  Type.Object(
    {
      tokenType: Type.Literal('Bearer'),
      expiresAt: Timestamp,
      token: Type.String({ description: 'Send as `Authorization: Bearer <token>`' }),
    },
    { description: 'An installation access token' },
  ),
);

export const Me = component(
  'Me',
  Type.Object(
    {
      userId: Type.Integer(),
      displayName: Type.String(),
      email: Type.String(),
      ...AppIdFields,
      appId: Type.String({ description: 'The same as platformAppId (the name DXAPI clients read)' }),
      dateTermsAccepted: Type.Union([Timestamp, Type.Null()], { description: 'null: not recorded' }),
      workspace: Type.Object({
        workspaceId: Type.Integer(),
        displayName: Type.String(),
        type: Type.Unsafe<WorkspaceType>({ type: 'string', enum: [...WORKSPACE_TYPES] }),
      }),
      permissions: Type.Array(Type.Unsafe<Permission>({ type: 'string', enum: [...PERMISSIONS] })),
    },
    { description: 'Who the credential speaks for' },
  ),
);
