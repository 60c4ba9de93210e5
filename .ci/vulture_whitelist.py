# Names vulture (the dead-code check of .ci/run) cannot see used: called by a framework, by name, or kept
# as part of a documented contract. Anything else it reports is dead: remove it rather than list it here.
# ruff: noqa
# fmt: off
__getattr__                     # the lazy re-exports of stallscan/__init__.py and the stage packages (PEP 562)
export, guard_main, install_cmd, uninstall_cmd, status_cmd, show, spark_replay_cmd, sql_cmd  # typer commands, registered by decorator
_.show_args                     # ReportOptions field, written by the CLI and read from the report JSON's options
EXIT_OK                         # the documented exit code 0 (stallscan/store/errors.py lists them all)
CELL_COLUMNS                    # the sweep-cell contract shared with stallscan.spark, named in docstrings
n_all                           # Curve field filled positionally (events of the "all" population)
pytest_collection_modifyitems, pytest_generate_tests, pytestmark  # pytest hooks and module marks
_here                           # an autouse pytest fixture (tests/functional/test_report_lanes.py)
_.handle_starttag, _.handle_startendtag, _.handle_endtag  # html.parser.HTMLParser callbacks (tests)
attrs                           # their signature
_.list_commands, _.get_command  # click.Group methods the root group (stallscan.cli._Lazy) overrides
_.do_POST, _.log_message        # http.server.BaseHTTPRequestHandler callbacks (tests/trace_capture.py's stub server)
_.on_start, parent_context      # opentelemetry SpanProcessor callback and its signature (tests/trace_capture.py)
_.on_broken_pipe, _.quiet       # rich Console's broken-pipe hook and its flag, overridden (stallscan/report/streams.py)
