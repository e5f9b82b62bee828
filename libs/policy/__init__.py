"""ModelGuard's policy: one model's effective policy and the central policy's sections, each a typed model.

``model_policy`` (a model's gate and workspace config inside the central sections, parsed once per incident),
``diagnosis``, ``repair`` and ``sandbox`` (the central sections the phases read), ``ci`` (the CI result of each
outcome), ``central`` (where the central policy lives), ``effective`` (a bundle's effective policy), ``errors``
(the one-line error every loader raises) and ``model_policies`` (onboarding a model: submissions and pins).
"""
