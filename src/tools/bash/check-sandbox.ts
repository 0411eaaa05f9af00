import type { Config } from '../../config.ts';
import { runBash } from './bash-tool.ts';

const READY = 'sandbox-ready';

/**
 * The start-up check when TOOLS_BASH_ENABLED=1: one command through the real sandbox. Where bubblewrap is
 * missing, too old, or may not create namespaces, the server does not start, saying what to install or allow,
 * rather than start with a bash tool that cannot run (or that would run unsandboxed).
 */
export async function checkBashSandbox(config: Readonly<Config>): Promise<void> {
  const problem = await runBash(`echo ${READY}`, { settings: config, signal: new AbortController().signal }).then(
    (result) => (result.exit_code === 0 && result.stdout === `${READY}\n` ? undefined : result.stderr.trim() || `exit code ${result.exit_code}`),
    (error: unknown) => (error instanceof Error ? error.message : String(error)),
  );
  if (problem === undefined) return;
  throw new Error(`TOOLS_BASH_ENABLED=1, but the bash sandbox does not work (${config.bash.bwrapPath}: ${problem}). `
    + 'Install bubblewrap 0.8 or later (Debian, Ubuntu: apt-get install bubblewrap) or point BWRAP_PATH at it, and let the server '
    + 'create user namespaces (in a container: README, "The bash sandbox"); or leave TOOLS_BASH_ENABLED unset.');
}
