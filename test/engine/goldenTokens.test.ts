import { createEngine } from '../../src/index.js';
import { goldenTokenSuite } from './goldenTokenSuite.js';

// FF1 as loaded by default: the native addon where it is built (CI builds it).
goldenTokenSuite('golden tokens', createEngine);
