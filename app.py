"""Scorer Studio: the Streamlit entry point. Run with ``streamlit run app.py``.

The router: one ``st.Page`` line per page. Each page script starts with
``dashboard.layout.setup_page()`` (page config and the shared judge-settings sidebar).
"""

import streamlit as st

from dashboard.layout import page_config

page_config()
pages = [
    st.Page("pages/evaluate.py", title="Evaluate", icon=":material/rule:", default=True),
    st.Page("pages/batch.py", title="Batch", icon=":material/table_view:"),
    st.Page("pages/compare.py", title="Compare", icon=":material/compare_arrows:"),
    st.Page("pages/history.py", title="History", icon=":material/history:"),
    st.Page("pages/review.py", title="Review", icon=":material/reviews:"),
    st.Page("pages/judges.py", title="Judges", icon=":material/gavel:"),
    st.Page("pages/catalogue.py", title="Catalogue", icon=":material/menu_book:"),
]
st.navigation(pages).run()
