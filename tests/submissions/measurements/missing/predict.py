# a submission that forgot measurements.json
