// How a message about a bad option names the value it got: its kind, never the value itself but for the start of a
// short string (an option's value may be a secret). One helper for every check of the plugin's and the stores'.

/** A value's kind, as a message about a bad option names it: "the string …", "a number", "an array". */
export function kindOf(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'string'
    ? `the string "${value.slice(0, 40)}"`
    : `${typeof value === 'object' ? 'an' : 'a'} ${typeof value}`;
}
