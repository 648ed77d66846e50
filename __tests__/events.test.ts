import { Emitter } from '../lib/support/emitter.js';

describe('Emitter', () => {
  it('keeps calling listeners after one throws, and reports the throw on its own', () => {
    jest.useFakeTimers();
    try {
      const emitter = new Emitter<{ ping: number }>();
      const got: number[] = [];
      emitter.on('ping', () => {
        throw new Error('listener broke');
      });
      emitter.on('ping', (n) => got.push(n));

      expect(() => emitter.emit('ping', 1)).not.toThrow();
      expect(got).toEqual([1]);
      expect(() => jest.runOnlyPendingTimers()).toThrow('listener broke');
    } finally {
      jest.useRealTimers();
    }
  });
});
