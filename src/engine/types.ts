/** The fourteen data kinds of the protection API, in the seed's order. */
export const KINDS = [
  'address', 'uuid', 'text', 'phone', 'ipv4', 'ssn', 'price',
  'date', 'latlng', 'name', 'city', 'email', 'ccn', 'numeric',
] as const;
export type Kind = (typeof KINDS)[number];

export const METHODS = ['tokenise', 'fpe', 'mask', 'redact', 'passthrough'] as const;
export type Method = (typeof METHODS)[number];

/** Methods that unprotect gives back the original for. */
export const REVERSIBLE_METHODS: ReadonlySet<Method> = new Set(['tokenise', 'fpe', 'passthrough']);

export const LANGS = [
  'en', 'de', 'fr', 'es', 'it', 'ru', 'ar', 'si', 'th', 'hi', 'ja', 'ko', 'zh',
  'te', 'kn', 'ta', 'bn', 'pa', 'gu', 'or', 'ml',
] as const;
export type Lang = (typeof LANGS)[number];

/** Kinds that accept `lang`: free text in any supported script. */
export const LANG_KINDS: ReadonlySet<Kind> = new Set(['address', 'text', 'name', 'city']);

export const OPERATIONS = ['protect', 'unprotect'] as const;
export type Operation = (typeof OPERATIONS)[number];

export const DEFAULT_METHOD: Method = 'tokenise';
export const DEFAULT_SCOPE = 'no-scope';
export const DEFAULT_LANG: Lang = 'en';

/** Options as a caller may send them (strings from JSON, numbers from code). */
export interface ProtectOptions {
  method?: string;
  scope?: string;
  noise?: number | string;
  lang?: string;
}

/** Options after validation and defaults. */
export interface ResolvedOptions {
  method: Method;
  scope: string;
  noise: number;
  lang: Lang;
}

export interface Discrepancy {
  invalid_token?: number[];
  invalid_scope?: number[];
}

/** The seed's response body, with no `id`. */
export interface ProtectionResponse {
  operation: Operation;
  result: string[];
  method?: Method;
  scope?: string;
  noise?: string;
  discrepancy?: Discrepancy;
}

export function isKind(value: unknown): value is Kind {
  return typeof value === 'string' && (KINDS as readonly string[]).includes(value);
}
export function isMethod(value: unknown): value is Method {
  return typeof value === 'string' && (METHODS as readonly string[]).includes(value);
}
export function isLang(value: unknown): value is Lang {
  return typeof value === 'string' && (LANGS as readonly string[]).includes(value);
}
