import { toIsoDate, type DateStyle } from '../valueCodecs/dateStyle.js';
import { canonicalUuidText } from '../valueCodecs/uuidText.js';
import { TYPE_OIDS } from '../valueCodecs/valueCodecs.js';

/**
 * A value's text as the engine should read it. A date column takes `2024-05-17T00:00:00+02:00`
 * (what drivers send for a timestamp object) as its date part, and `05/06/2024` in the session's
 * DateStyle order: both become ISO, which PostgreSQL reads the same under every DateStyle. A uuid
 * column takes every form PostgreSQL's uuid input accepts (`{…}`, upper case, 32 bare digits, a
 * hyphen after any four) as its canonical form; a text column keeps the value as sent, so the kind
 * alone decides what it accepts. A value neither reads is left as sent for the kind to refuse.
 */
export function normaliseText(typeOid: number, text: string, style: DateStyle): string {
  if (typeOid === TYPE_OIDS.date) {
    const match = /^(\d{4}-\d{2}-\d{2})[T ]\d{2}:\d{2}/.exec(text.trim());
    if (match) return match[1] as string;
    return toIsoDate(text, style) ?? text;
  }
  if (typeOid === TYPE_OIDS.uuid) return canonicalUuidText(text) ?? text;
  return text;
}
