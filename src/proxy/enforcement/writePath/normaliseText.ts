import { toIsoDate, type DateStyle } from '../valueCodecs/dateStyle.js';
import { TYPE_OIDS } from '../valueCodecs/valueCodecs.js';

/**
 * A value's text as the engine should read it. A date column takes `2024-05-17T00:00:00+02:00`
 * (what drivers send for a timestamp object) as its date part, and `05/06/2024` in the session's
 * DateStyle order: both become ISO, which PostgreSQL reads the same under every DateStyle.
 */
export function normaliseText(typeOid: number, text: string, style: DateStyle): string {
  if (typeOid === TYPE_OIDS.date) {
    const match = /^(\d{4}-\d{2}-\d{2})[T ]\d{2}:\d{2}/.exec(text.trim());
    if (match) return match[1] as string;
    return toIsoDate(text, style) ?? text;
  }
  return text;
}
