import { writeApp } from '../constructs/synth.js';
import { examplesApp } from './app.js';

// `cdk8s synth` runs this (see cdk8s.yaml) and sets CDK8S_OUTDIR.
const app = examplesApp();
writeApp(app, app.outdir);
