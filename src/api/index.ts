/** The protection API's public surface: the HTTP server and who may call what. */
export { createApiAuthoriser, type ApiAuthoriser } from './authorisation.js';
export { startApiServer, type ApiServerOptions, type RunningApi } from './server.js';
