import { loadConfig } from '../../src/config.ts';
import { checkBashSandbox } from '../../src/tools/bash/check-sandbox.ts';

/** Why bash's sandbox cannot run here (the start-up check's message), or false: tests of bash are skipped saying why. */
export const bashSandboxMissing: string | false = await checkBashSandbox(loadConfig({ TOOLS_BASH_ENABLED: '1' }))
  .then(() => false, (error: Error) => error.message);
