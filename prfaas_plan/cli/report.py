"""`report`: one self-contained HTML file of a scenario's plan, tables and figures."""
