"""Files people attach to a reply: fetched safely, kept briefly, named on the ticket."""
