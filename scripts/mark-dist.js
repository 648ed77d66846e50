// Each build folder says its own module format, so Node and TypeScript read dist/esm as ESM and dist/cjs as CommonJS.
const { writeFileSync } = require('node:fs');

writeFileSync('dist/esm/package.json', '{ "type": "module" }\n');
writeFileSync('dist/cjs/package.json', '{ "type": "commonjs" }\n');
