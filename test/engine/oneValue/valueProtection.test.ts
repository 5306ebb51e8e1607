import { createEngine } from '../../../src/engine/index.js';
import { valueProtectionSuite } from './valueProtectionSuite.js';

valueProtectionSuite('one value at a time (FF1 native where the addon is built)', createEngine);
