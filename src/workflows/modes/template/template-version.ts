import semver from 'semver';

/**
 * A template's version is a semantic version written out in full, as semver prints it: MAJOR.MINOR.PATCH with an
 * optional pre-release (`2.0.0-rc.1`). Nothing semver would read leniently or clean up passes (`1e0`, `0x1`, `1.0`,
 * `v1.0.0`, spaces), nor build metadata (`1.0.0+abc`), which semver ignores in comparisons: one version, one spelling.
 */
export const isTemplateVersion = (text: string) => semver.valid(text) === text;

export const versionProblem = (text: string) => `${JSON.stringify(text)} is not a semantic version (MAJOR.MINOR.PATCH, e.g. 1.0.0)`;

/** Negative when `a` is older; a pre-release comes before its release. */
export const compareVersions = (a: string, b: string) => semver.compare(a, b);

/** The latest release of a list sorted oldest first; the latest pre-release when none is released. */
export function latestOf<T extends { version: string }>(releases: T[]): T | undefined {
  return releases.findLast((release) => semver.prerelease(release.version) === null) ?? releases.at(-1);
}
