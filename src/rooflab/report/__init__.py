"""Renderers: terminal tables, Markdown, charts, HTML. They return objects or strings.

Nothing here prints; heavy libraries (matplotlib, plotly) are imported inside the
functions that draw, so importing this package stays light.
"""
