/**
 * The PostgreSQL wire-protocol proxy: start it with `startProxy(options)`, or with the configuration's
 * proxy section and column policies with `startConfiguredProxy(options)`.
 */
export { startProxy, type RunningProxy } from './proxyServer.js';
export { socketIoStatus, type SocketAddonStatus } from './nativeSockets/socketAddon.js';
export {
  startConfiguredProxy, type ConfiguredProxy, type ConfiguredProxyOptions,
} from './configuredProxy.js';
export type {
  ProxyOptions, ClientTlsOptions, ClientTlsMode, UpstreamLogin, UpstreamOptions, UpstreamSslMode, CancelPeer, CancelRoutingOptions,
} from './proxyOptions.js';
export type {
  SessionHooks, SessionHooksFactory, SessionContext, MessageVerdict,
} from './session/sessionHooks.js';
export { DROP, passThroughHooks } from './session/sessionHooks.js';
export type {
  ProtocolStateView, ReplyListener, ReplyTracker, TransactionStatus, UnansweredOutcome,
} from './session/protocolState.js';
export { generateSelfSignedCertificate, type CertificatePair } from './tls/selfSignedCertificate.js';
