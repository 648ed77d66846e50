// Base64 over UTF-8 without Buffer, so the same code runs in browsers.

export function base64FromUtf8(text: string): string {
  let binary = '';
  for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** Decodes base64url (as in a JWT segment) to text; undefined when it is not valid base64url. */
export function utf8FromBase64Url(segment: string): string | undefined {
  const base64 = segment.replace(/-/g, '+').replace(/_/g, '/');
  try {
    const binary = atob(base64 + '='.repeat((4 - (base64.length % 4)) % 4));
    return new TextDecoder().decode(Uint8Array.from(binary, (char) => char.charCodeAt(0)));
  } catch {
    return undefined;
  }
}
