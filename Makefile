# theloop: every target builds its own virtualenv (.venv) from the requirements files.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install run test test-fast lint bench soak clean manifest doctor demo mutate

$(STAMP): requirements.txt requirements-dev.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements-dev.txt
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(BIN)/errbot -c config.py

# The one test command (README, CI): lint, then the whole suite on every core (pytest-xdist,
# two workers a core: the end-to-end tests mostly wait on their bots and fakes, and the whole
# e2e folder took 171 s on 4 workers against 275-296 s on 2, on two cores; JOBS=2 for two,
# JOBS=0 for none: in this process, as --pdb needs).
# Each test has its own ports, temp dirs and bots; the workers share one PostgreSQL server,
# a database a test (tests/support/shared_postgres.py); a module sharing one bot runs whole
# on one worker (tests/support/scheduling.py). The slowest tests close the output: where a
# run's time went, for tuning JOBS and the scheduling.
JOBS ?= $(shell echo $$(( 2 * $$(nproc) )))
test: lint
	$(BIN)/python -m pytest -n $(JOBS) --durations=25

# For the edit-run loop: lint, then everything but the end-to-end tests (marker `e2e`).
test-fast: lint
	$(BIN)/python -m pytest -n $(JOBS) -m "not e2e"

# lint-imports checks the core's layers (pyproject.toml): looproom is found on the path.
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	PYTHONPATH=plugins/theloop $(BIN)/lint-imports

bench: $(STAMP)
	$(BIN)/python bench/bench_digest.py
	$(BIN)/python bench/bench_ingest.py
	$(BIN)/python bench/bench_rooms.py
	$(BIN)/python bench/bench_room.py

# The soak (docs/soak.md): the real bot against the loopback fakes under a seeded fault
# schedule for MINUTES minutes, then its ledger; not part of `make test`. SOAK_ARGS adds
# options (--seed N, --items, --rooms, --drain, --keep DIR).
MINUTES ?= 10
soak: $(STAMP)
	$(BIN)/python -m soak --minutes $(MINUTES) $(SOAK_ARGS)

# Mutation testing (docs/mutation.md): mutmut over one core module at a time, one test process
# at a time; not part of `make test`. MODULE=inbound/signing.py for one (several: space
# separated); unset, every module tools/mutate.py lists, in turn.
mutate: $(STAMP)
	$(BIN)/python tools/mutate.py $(MODULE)

# A real work item played through the signed webhook into the Text console: type your decisions.
DEMO_ENV := THELOOP_BACKEND=Text THELOOP_SLACK_BOT_TOKEN= THELOOP_WEBHOOK_SECRET= \
	THELOOP_DATA_DIR=data/demo THELOOP_CONFIG=demo/theloop.yaml
demo: $(STAMP)
	rm -rf data/demo
	$(DEMO_ENV) $(BIN)/python demo/play.py --data-dir data/demo \
		--url http://127.0.0.1:$${THELOOP_HTTP_PORT:-3141}/theloop/events & \
		$(DEMO_ENV) $(BIN)/errbot -c config.py

# The Slack app's manifest, to paste into api.slack.com/apps (NAME=…, HTTP=https://… optional),
# with its one-click create link; AGAINST=the manifest the app was made from: what changed.
manifest: $(STAMP)
	@PYTHONPATH=plugins/theloop $(BIN)/python -m looproom.manifest \
		$(if $(NAME),--name "$(NAME)") $(if $(HTTP),--http "$(HTTP)") \
		$(if $(AGAINST),--against "$(AGAINST)")

# Why the room may be silent: the same checks as `!theloop doctor`, from this shell's environment.
doctor: $(STAMP)
	@PYTHONPATH=plugins/theloop $(BIN)/python -m looproom.doctor

clean:
	rm -rf $(VENV) data .pytest_cache .hypothesis .mutate
