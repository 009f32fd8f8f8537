"""The chosen plan as the files a serving stack runs (llm-d, SGLang, vLLM, NVIDIA Dynamo), and back.

``model``: the typed deployment (per site its pools, threshold and link) built by ``api.deploy`` from
the plan; one module per target writes its files from it (``llmd``, ``engines`` for SGLang and
vLLM, ``dynamo``); ``readme`` says what each file is and what the target cannot express; ``read``
takes such files (ours, or a user's within what the formats say) back to a fleet and thresholds.
Every file is built as data and dumped (yaml.safe_dump, json.dumps), never spliced as text.
"""
