"""How results show as text in HTML: the number formats and escaping
(:mod:`.format`) and the ``_repr_html_`` of the result objects (:mod:`.repr`).

Used by the metrics' and the inference layer's results (notebooks) and by the
HTML report (:mod:`calibr._html`), so it sits at the bottom with the input layer:
no import runs up from a metric to the report.
"""
