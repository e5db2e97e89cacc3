// The one rule for the names people give apps, workspaces and proxy IDs, whoever gives them (the
// CLI, the console): trimmed, 1 to NAME_MAX characters, so every list and page can show them.
import { problem } from '../../errors.js';

export const NAME_MAX = 200;

/** The trimmed name, or a 400 that says what was expected (`what`: "an app name"). */
export function checkedName(value: string, what: string): string {
  const name = value.trim();
  if (name === '' || name.length > NAME_MAX)
    throw problem('invalid', `Enter ${what} of 1 to ${NAME_MAX} characters.`, {
      errors: { name: [name === '' ? 'required' : `at most ${NAME_MAX} characters`] },
    });
  return name;
}
