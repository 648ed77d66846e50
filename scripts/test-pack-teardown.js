// jest's globalTeardown: see test-pack.js.
module.exports = require('./test-pack.js').globalTeardown;
