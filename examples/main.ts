import { examplesApp } from './app.js';

// `cdk8s synth` runs this (see cdk8s.yaml); it sets CDK8S_OUTDIR, which App reads.
examplesApp().synth();
