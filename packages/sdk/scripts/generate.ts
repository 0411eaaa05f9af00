/**
 * Regenerates src/generated/openapi.ts. With no argument the document comes from the app's own route schemas
 * (this repository's server code); with a URL it comes from that running server's /openapi.json.
 *   node scripts/generate.ts [http://127.0.0.1:8080]
 */
import { writeFile } from 'node:fs/promises';
import { GENERATED_PATH, typesForDocument } from './openapi-types.ts';

const url = process.argv[2];
const document = url
  ? await fetch(new URL('/openapi.json', url)).then((response) => response.json())
  : await (await import('./app-document.ts')).openApiDocumentOfApp();
await writeFile(GENERATED_PATH, await typesForDocument(document));
console.log(`wrote ${GENERATED_PATH.pathname}`);
