/** Machine-readable reasons the API adds beside the engine's ProtectionError codes. */
export type ApiErrorCode =
  | 'bad_request'
  | 'invalid_json'
  | 'invalid_body'
  | 'conflicting_option'
  | 'unknown_kind'
  | 'unknown_operation'
  | 'not_a_string'
  | 'unsupported_media_type'
  | 'payload_too_large'
  | 'too_many_elements'
  | 'element_too_large'
  | 'unauthorized'
  | 'forbidden'
  | 'rate_limited'
  | 'not_found'
  | 'internal_error';

/** An error the API raises itself; httpErrors.ts turns it into the response body. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly statusCode: number;
  readonly code: ApiErrorCode;
  readonly indexes: number[] | undefined;

  constructor(statusCode: number, code: ApiErrorCode, message: string, indexes?: number[]) {
    super(message);
    this.statusCode = statusCode;
    this.code = code;
    this.indexes = indexes;
  }
}
