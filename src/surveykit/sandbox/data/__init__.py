"""The sandbox's data: seed account, campaign survey, codebooks, simulated respondents.

The sandbox's data: the seed account (``_seed``, from ``sample_data/``), the campaign
survey (``_campaign``), codebooks of its surveys (``_codebook``) and the simulated
respondents' behaviours (``_behaviour``). Generated results are :mod:`surveykit.sandbox.generator`.
"""
