// The app's identifier on the wire. The interface names it `platformAppId`; existing DXAPI clients
// name it `movementAppId` and reject an item without it. Both are written wherever an app id is
// shown and either is read wherever one is taken: this file is the one home of that alias.
import { problem } from '../../errors.js';

/** The app id under both of its names. */
export interface AppIdFields {
  platformAppId: string;
  movementAppId: string;
}

/** The fields that name an app in an answer. */
export function appIdFields(appId: string): AppIdFields {
  return { platformAppId: appId, movementAppId: appId };
}

/** A reference to an app as a client sends it: either name, or both when they agree. */
export interface AppIdRef {
  platformAppId?: string | undefined;
  movementAppId?: string | undefined;
}

/** The app id a reference names; 400 naming `field` when it names none or two different ones. */
export function appIdOf(ref: AppIdRef, field: string): string {
  const { platformAppId, movementAppId } = ref;
  if (platformAppId !== undefined && movementAppId !== undefined && platformAppId !== movementAppId) {
    throw problem('invalid', 'platformAppId and movementAppId name different apps.', {
      errors: { [field]: ['platformAppId and movementAppId must be equal when both are given'] },
    });
  }
  const id = platformAppId ?? movementAppId;
  if (id === undefined || id === '') {
    throw problem('invalid', 'An app must be named by platformAppId (or movementAppId).', {
      errors: { [field]: ['must have platformAppId or movementAppId'] },
    });
  }
  return id;
}
