import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import path from 'node:path';

/** The names Chromium's executable goes by in distributions' packages and Google's. */
const EXECUTABLE_NAMES = ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable'];

const INSTALL_HINT = 'install Chromium (on Debian or Ubuntu: apt-get install chromium) or set CHROMIUM_PATH to its executable';

/**
 * The Chromium the browser tools drive: CHROMIUM_PATH when set (and then only it, so a typo is reported rather
 * than hidden by another browser found on PATH), else the first of the usual names on PATH.
 */
export async function findChromium(configuredPath: string | undefined, searchPath = process.env.PATH ?? ''): Promise<string> {
  if (configuredPath !== undefined) {
    if (await isExecutable(configuredPath)) return configuredPath;
    throw new Error(`Chromium is not available: CHROMIUM_PATH=${configuredPath} is not an executable file; ${INSTALL_HINT}`);
  }
  const directories = searchPath.split(path.delimiter).filter(Boolean);
  for (const name of EXECUTABLE_NAMES) {
    for (const directory of directories) {
      const candidate = path.join(directory, name);
      if (await isExecutable(candidate)) return candidate;
    }
  }
  throw new Error(`Chromium is not installed: none of ${EXECUTABLE_NAMES.join(', ')} is on PATH; ${INSTALL_HINT}`);
}

async function isExecutable(file: string): Promise<boolean> {
  try {
    await access(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
