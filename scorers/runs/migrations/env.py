"""Alembic environment of the store: run on the connection :class:`scorers.runs.store.Store` passes in.

The store applies the migrations itself when it opens a database; to run Alembic's own
commands, build a ``Config`` with ``script_location`` = this folder and
``config.attributes["connection"]`` = an open SQLAlchemy connection.
"""

from alembic import context

connection = context.config.attributes["connection"]
context.configure(connection=connection, render_as_batch=connection.dialect.name == "sqlite")
with context.begin_transaction():
    context.run_migrations()
