/**
 * One message handed to session hooks as SessionRelay hands it: whole for the types they
 * intercept (on-demand types when the hooks want them), by header for their header types, and not
 * at all otherwise; the ProtocolState follows it in the relay's order. For tests that drive hooks
 * without a relay.
 */
import type { MessageVerdict, SessionContext, SessionHooks } from '../../../../src/proxy/session/sessionHooks.js';
import type { ProtocolState } from '../../../../src/proxy/session/protocolState.js';
import { forEachFrame } from '../../../../src/proxy/protocol/messageReaders.js';

function named(types: string | undefined, type: number): boolean {
  return types !== undefined && types.includes(String.fromCharCode(type));
}

/** A client message; the verdict is what the hooks forward instead (undefined: the same bytes). */
export async function deliverFrontend(hooks: SessionHooks, context: SessionContext, state: ProtocolState<unknown>, frame: Buffer): Promise<MessageVerdict> {
  const type = frame[0] as number;
  let verdict: MessageVerdict;
  const whole = named(hooks.frontendTypes, type)
    || (named(hooks.frontendOnDemandTypes, type) && hooks.wantsFrontendMessage?.(type, frame, 0, frame.length, context) !== false);
  if (whole) verdict = await hooks.onFrontendMessage(frame, context);
  else if (named(hooks.frontendHeaderTypes, type)) hooks.onFrontendHeader?.(type, frame.length > 5 ? (frame[5] as number) : 0, context);
  forEachFrame(verdict ?? frame, (forwarded) => state.frontendMessage(forwarded));
  state.clearExpected();
  return verdict;
}

/** A server message; the verdict is what the hooks send the client instead. */
export async function deliverBackend(hooks: SessionHooks, context: SessionContext, state: ProtocolState<unknown>, frame: Buffer): Promise<MessageVerdict> {
  const type = frame[0] as number;
  const firstBodyByte = frame.length > 5 ? (frame[5] as number) : 0;
  state.backendMessage(type, firstBodyByte);
  if (named(hooks.backendOnDemandTypes, type)) return hooks.wantsBackendMessage?.(type, frame, 0, frame.length, context) === false ? undefined : hooks.onBackendMessage(frame, context);
  if (named(hooks.backendTypes, type)) return hooks.onBackendMessage(frame, context);
  if (named(hooks.backendHeaderTypes, type)) hooks.onBackendHeader?.(type, firstBodyByte, context);
  return undefined;
}
