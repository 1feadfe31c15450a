"""Experiments on a real model: change one norm (or the numbers it sees) and measure what
breaks, on a held-out text.

Every experiment runs the unmodified model once (``runs.reference``) and a modified one, and
measures the text's perplexity, the KL divergence of each position's next-token
distribution from the unmodified model's, and whether the most likely next token agrees.

- ``texts/``        the held-out texts (English, Chinese), written for this project
- ``text.py``       which text, tokenized and cut to the tokens an experiment reads
- ``runs.py``       the unmodified run, modified passes on the shared model (hooks and
                    swapped weights always removed), and the measures of an effect
- ``norm_maps.py``  what a norm computes, and the replacements the experiments put in
- ``massive.py``    massive activations set to zero or to their mean, or left (Sun et al.)
- ``swap.py``       RMSNorm → LayerNorm (or back) in chosen blocks
- ``freeze.py``     each token's 1/RMS replaced by its average, one block or a sweep
- ``fold.py``       γ folded into the linear maps that read a norm (FlashNorm, fold_ln)
- ``lens.py``       the logit lens with the layer's own scale, the last layer's, or none
- ``half.py``       the model in float16 with the norms' upcast removed: where it breaks
- ``refusals.py``   every refusal's key and English message

Specs are in ``engine/config/experiments.py``.  Import from the modules; this package's
``__init__`` imports nothing, so ``engine.config`` can read ``refusals`` without a cycle.
"""
