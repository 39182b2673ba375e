#!/usr/bin/env node
// The admin CLI. Runs the TypeScript sources through tsx, as `npm start` does.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
