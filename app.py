"""Scorer Studio: the Streamlit entry point. Run with ``streamlit run app.py``.

The router: one ``st.Page`` line per page. Each page script starts with
``dashboard.layout.setup_page()`` (page config and the shared judge-settings sidebar).
"""

import streamlit as st

from dashboard.layout import page_config

page_config()
pages = [
    st.Page("views/evaluate.py", title="Evaluate", icon=":material/rule:", default=True),
    st.Page("views/batch.py", title="Batch", icon=":material/table_view:"),
    st.Page("views/compare.py", title="Compare", icon=":material/compare_arrows:"),
    st.Page("views/history.py", title="History", icon=":material/history:"),
    st.Page("views/review.py", title="Review", icon=":material/reviews:"),
    st.Page("views/judges.py", title="Judges", icon=":material/gavel:"),
    st.Page("views/catalogue.py", title="Catalogue", icon=":material/menu_book:"),
]
st.navigation(pages).run()
