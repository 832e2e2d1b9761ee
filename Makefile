# Convenience aliases; the commands themselves need only Python (see README).
.PHONY: demo test bench
demo:
	python3 dev.py demo
test:
	python3 dev.py test
bench:
	python3 dev.py bench
