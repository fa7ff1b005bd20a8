"""The Head claims page: a head's claim over a corpus, knock-outs, and weight against contribution."""
