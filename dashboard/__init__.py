"""Streamlit and Plotly helpers shared by the dashboard pages (never imported by ``scorers``)."""
