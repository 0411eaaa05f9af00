import { DockerfileParser, type Instruction, type JSONInstruction } from 'dockerfile-ast';
import { validate as lintDockerfile } from 'dockerfile-utils';

/** Every problem the Dockerfile parser of Docker's language server finds (syntax, instructions, flags). */
export function dockerfileProblems(text: string): string[] {
  return lintDockerfile(text).map((diagnostic) => `line ${diagnostic.range.start.line + 1}: ${diagnostic.message}`);
}

/** What the Dockerfile's final stage (the image that runs) says, with build arguments at their defaults. */
export interface ImageFacts {
  baseImages: string[];
  user: string;
  exposedPorts: string[];
  env: Record<string, string>;
  entrypoint: string[];
  cmd: string[];
  healthcheck: string[];
  /** The paths COPY takes from the build context (not from another stage). */
  copiedFromContext: string[];
}

export function readImage(text: string): ImageFacts {
  const dockerfile = DockerfileParser.parse(text);
  const final = dockerfile.getFROMs().at(-1)!.getRange().start.line;
  const inFinalStage = (instruction: Instruction) => instruction.getRange().start.line >= final;
  const last = (keyword: string) => dockerfile.getInstructions().filter((instruction) => instruction.getKeyword() === keyword && inFinalStage(instruction)).at(-1);
  const exec = (instruction: Instruction | undefined) => (instruction as JSONInstruction | undefined)?.getJSONStrings().map((argument) => argument.getJSONValue()) ?? [];
  const healthcheck = last('HEALTHCHECK')?.getRawArgumentsContent() ?? '';
  return {
    baseImages: dockerfile.getFROMs().map((from) => from.getExpandedArguments()[0].getValue()),
    user: last('USER')?.getArgumentsContent() ?? 'root',
    exposedPorts: dockerfile.getInstructions().filter((instruction) => instruction.getKeyword() === 'EXPOSE' && inFinalStage(instruction))
      .flatMap((instruction) => instruction.getArguments().map((argument) => argument.getValue())),
    env: Object.fromEntries(dockerfile.getENVs().filter(inFinalStage).flatMap((env) => env.getProperties().map((property) => [property.getName(), property.getValue() ?? '']))),
    entrypoint: exec(last('ENTRYPOINT')),
    cmd: exec(last('CMD')),
    healthcheck: healthcheck.includes('CMD') ? JSON.parse(healthcheck.slice(healthcheck.indexOf('CMD') + 3)) : [],
    copiedFromContext: dockerfile.getCOPYs().filter((copy) => !copy.getFromFlag())
      .flatMap((copy) => copy.getArguments().slice(0, -1).map((argument) => argument.getValue())),
  };
}
