import type { Command } from 'commander';
import { configPath, readConfig, writeConfig } from '../config.ts';
import { table } from '../output.ts';
import type { CommandContext } from '../context.ts';

/** agentgate profile set|ls: named connections in the config file */
export function addProfileCommands(program: Command, context: CommandContext): void {
  const { print, sub, io } = context;
  const profiles = sub(program, 'profile', `named connections in ${configPath(io.env)}`);
  sub(profiles, 'set', 'add or change a profile').argument('<name>')
    .option('--set-url <url>', 'its gateway URL').option('--set-api-key <key>', 'its API key').option('--default', 'use it when no --profile is given')
    .action(async (name: string, options: { setUrl?: string; setApiKey?: string; default?: boolean }) => {
      const file = configPath(io.env);
      const config = await readConfig(file);
      const profile = { ...config.profiles?.[name], ...(options.setUrl ? { url: options.setUrl } : {}), ...(options.setApiKey ? { api_key: options.setApiKey } : {}) };
      await writeConfig(file, { ...config, ...(options.default ? { default_profile: name } : {}), profiles: { ...config.profiles, [name]: profile } });
      print({ profile: name, file }, () => `saved profile ${name} in ${file}`);
    });
  sub(profiles, 'ls', 'list profiles (keys hidden)')
    .action(async () => {
      const config = await readConfig(configPath(io.env));
      const rows = Object.entries(config.profiles ?? {}).map(([name, profile]) => ({
        name: name === config.default_profile ? `${name} (default)` : name, url: profile.url, api_key: profile.api_key ? `${profile.api_key.slice(0, 8)}…` : undefined,
      }));
      print(rows, () => table(rows, ['name', 'url', 'api_key']));
    });
}
