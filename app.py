"""Scorer Studio: the Streamlit entry point. Run with ``streamlit run app.py``.

The router: one ``st.Page`` line per page. Each page script starts with
``dashboard.layout.setup_page()`` (page config and the shared judge-settings sidebar).
"""

import streamlit as st

pages = [
    st.Page("pages/evaluate.py", title="Evaluate", icon=":material/rule:", default=True),
]
st.navigation(pages).run()
