import { lstatSync, readlinkSync } from 'node:fs';
import type { SpawnOptions } from 'node:child_process';
import type { Config } from '../../config.ts';

/** `nobody`: the sandbox's user inside, and outside too when the server runs as root. */
const SANDBOX_ID = 65534;
/** The command's private working directory (its HOME) and /tmp: tmpfs mounts of this size, gone with the sandbox. */
export const SCRATCH_BYTES = 64 * 1024 * 1024;
/** Processes (and threads) of the sandbox user at once, across every sandbox: a fork bomb stops here. */
const MAX_PROCESSES = 256;
/** Not the server's PATH: that may lead into the server's own tree (node_modules/.bin). */
const COMMAND_PATH = '/usr/local/bin:/usr/bin:/bin';
export const WORK_DIRECTORY = '/work';
/** The top-level directories commands run from (a symlink into /usr on merged-/usr systems). */
const SYSTEM_DIRECTORIES = ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];
/** The few files of /etc that commands need: alternatives (awk, editors), the loader's cache, user and group names. */
const ETC_FILES = ['/etc/alternatives', '/etc/ld.so.cache', '/etc/ld.so.conf', '/etc/ld.so.conf.d', '/etc/passwd', '/etc/group', '/etc/nsswitch.conf', '/etc/localtime'];

type BashSettings = Readonly<Config['bash']>;

export interface SandboxedCommand {
  file: string;
  args: string[];
  options: SpawnOptions;
}

/**
 * How to run a bash command in a bubblewrap sandbox (issue 25): new user, pid, network, ipc, uts and cgroup
 * namespaces (no network at all, not even the database on 127.0.0.1; no view of the server's processes), no
 * capabilities and no further user namespaces, the user `nobody`, a read-only /usr with the few /etc files
 * commands need, tmpfs scratch space, and an environment of PATH, HOME, LANG and TMPDIR only. Nothing of the
 * server is mounted: not DATA_DIR, not its code, not its sockets. bwrap itself starts with an empty environment
 * too, because its pid 1 inside the sandbox keeps the environment it was given and /proc/1/environ is readable
 * there. When the server runs as root, bwrap is started as `nobody` as well, so the command is no one outside
 * the sandbox either, and its processes are counted (MAX_PROCESSES); each process's memory is capped (ulimit -v).
 */
export function sandboxedBash(settings: BashSettings, command: string): SandboxedCommand {
  const isRoot = process.getuid?.() === 0;
  const limits = [`ulimit -v ${settings.memoryMb * 1024}`, ...(isRoot ? [`ulimit -u ${MAX_PROCESSES}`] : [])].join(' && ');
  return {
    file: settings.bwrapPath,
    args: [
      ...namespaceArguments(),
      ...filesystemArguments(),
      '--chdir', WORK_DIRECTORY, '--clearenv',
      '--setenv', 'PATH', COMMAND_PATH, '--setenv', 'HOME', WORK_DIRECTORY, '--setenv', 'LANG', 'C.UTF-8', '--setenv', 'TMPDIR', '/tmp',
      // The limits are set by a shell that then becomes the command's, which arrives as its argument, unquoted.
      '/bin/bash', '-c', `${limits} && exec /bin/bash -c "$1"`, 'bash', command,
    ],
    options: {
      env: {},
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own process group, so that a timeout or a cancel kills bwrap, and with it (--die-with-parent) the sandbox.
      detached: true,
      ...(isRoot ? { uid: SANDBOX_ID, gid: SANDBOX_ID } : {}),
    },
  };
}

function namespaceArguments(): string[] {
  return [
    '--unshare-all', '--unshare-user', '--disable-userns', '--die-with-parent', '--new-session', '--cap-drop', 'ALL',
    '--uid', String(SANDBOX_ID), '--gid', String(SANDBOX_ID), '--hostname', 'sandbox',
  ];
}

function filesystemArguments(): string[] {
  return [
    '--ro-bind', '/usr', '/usr',
    ...SYSTEM_DIRECTORIES.flatMap(systemDirectory),
    ...ETC_FILES.flatMap((file) => ['--ro-bind-try', file, file]),
    '--proc', '/proc', '--dev', '/dev',
    '--size', String(SCRATCH_BYTES), '--tmpfs', '/tmp',
    '--size', String(SCRATCH_BYTES), '--tmpfs', WORK_DIRECTORY,
  ];
}

/** The same symlink into /usr inside, or the directory bound read-only; nothing when the host has none. */
function systemDirectory(directory: string): string[] {
  try {
    if (lstatSync(directory).isSymbolicLink()) return ['--symlink', readlinkSync(directory), directory];
    return ['--ro-bind', directory, directory];
  } catch {
    return [];
  }
}
