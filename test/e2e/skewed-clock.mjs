// Preloaded into an agent process (`node --import`) by AgentProcess's `clockSkewMs`: the process's wall clock (Date.now
// and new Date()) runs EXTENDED_DEPLOYMENT_TEST_CLOCK_SKEW_MS off the host's, as on a node whose clock is wrong. The
// monotonic clock (performance.now) is left alone: a skewed host's clock still ticks at the same rate.
const skew = Number(process.env.EXTENDED_DEPLOYMENT_TEST_CLOCK_SKEW_MS ?? '0');
const RealDate = Date;

class SkewedDate extends RealDate {
  constructor(...args) {
    if (args.length === 0) super(RealDate.now() + skew);
    else super(...args);
  }

  static now() {
    return RealDate.now() + skew;
  }
}

globalThis.Date = SkewedDate;
