// The page's glue: load the model named by ?model=, translate the textarea's lines on click.
(async function () {
  'use strict';
  const status = document.getElementById('status'), model = document.getElementById('model');
  const params = new URLSearchParams(location.search);
  const dir = (params.get('model') || '../export/onnx').replace(/\/$/, '');
  try {
    ort.env.wasm.wasmPaths = new URL('node_modules/onnxruntime-web/dist/', location.href).href;
    ort.env.wasm.numThreads = 1;  // threads need a cross-origin-isolated page; a plain file server is not
    const json = async (f) => (await fetch(`${dir}/${f}`)).json();
    const settings = await json('onnx.json');
    const options = YokeOnnx.sessionOptions(1);
    options.executionProviders = ['wasm'];
    const [encoder, decoder, srcVocab, tgtVocab] = await Promise.all([
      ort.InferenceSession.create(`${dir}/encoder.onnx`, options),
      ort.InferenceSession.create(`${dir}/decoder.onnx`, options),
      json(settings.vocab.src), json(settings.vocab.tgt)]);
    const translator = new YokeOnnx.Translator(ort, settings, encoder, decoder);
    const src = new YokeSpm.SentencePieceBPE(srcVocab), tgt = new YokeSpm.SentencePieceBPE(tgtVocab);
    model.textContent = `model ${dir}: ${settings.arch}, tie ${settings.tie}, output ${settings.output} ` +
      `(onnxruntime-web ${ort.env.versions ? ort.env.versions.web : ''})`;
    const button = document.getElementById('go');
    button.disabled = false;
    button.onclick = async () => {
      button.disabled = true;
      const started = performance.now();
      const lines = document.getElementById('input').value.split('\n').filter((l) => l.trim());
      const opts = { ...settings.search, beam: Number(document.getElementById('beam').value) };
      const hyps = await translator.translateIds(lines.map((l) => src.encode(l)), opts);
      document.getElementById('output').textContent = hyps.map((h) => tgt.decode(h)).join('\n');
      status.textContent = `translated ${lines.length} line(s) in ${Math.round(performance.now() - started)} ms`;
      document.body.dataset.translated = 'yes';  // what scripts/check-browser.sh waits for
      button.disabled = false;
    };
  } catch (e) {
    model.textContent = 'error: ' + (e && e.message ? e.message : e);
    document.body.dataset.translated = 'error';
  }
})();
