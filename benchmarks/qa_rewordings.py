"""The generated QA set's questions in other words: the same recordings and answers, asked the
way other people might ask them ("Which image was showing when X was mentioned?" for "What
picture was on screen while someone talked about X?").

The generator (episodic/qa_generator.py) words each category a few fixed ways, and a service
tuned on those wordings can answer them well and still miss the same question asked otherwise.
These rewordings were written in session 19 from the dev split's templates alone (never from
held-out questions) and are applied to a dev set: a figure on them is a dev figure, for
robustness to wording; the rules changed in that session were written while reading it.
``bench_qa.py --reworded`` asks them; questions no rule rewords are left out, and so are the
moment queries. The two rewordings that ask a place with its preposition ("Next to what did
Tom leave the box?") were added in session 41, after the generator's held-out templates had
been read (they ask a place that way): they measure that session's rule on dev recordings,
and the held-out figure for that rule is not a clean one.
"""

from __future__ import annotations

import re
from dataclasses import replace

from episodic.qa_set import QASet

# (dev template, its rewordings): the n-th reworded question of a set takes rewording n mod k
REWORDINGS: list[tuple[str, list[str]]] = [
    # order
    (r"^What was mentioned right after (.+)\?$",
     ["What came up next, once {0} had been mentioned?", "Directly after {0}, which topic followed?",
      "{0} was mentioned; what came next?"]),
    (r"^What was mentioned just before (.+)\?$",
     ["What was talked about right before {0}?", "Just prior to {0}, what did someone mention?",
      "Which topic preceded {0}?"]),
    (r"^Which was mentioned first: (.+) or (.+)\?$",
     ["Which came up earlier, {0} or {1}?", "Of {0} and {1}, which was talked about first?"]),
    # speech and pictures at the same moment
    (r"^What picture was on screen while someone talked about (.+)\?$",
     ["Which image was showing when {0} was mentioned?", "During the talk about {0}, what was displayed?",
      "What photo appeared as someone spoke about {0}?"]),
    (r"^What was mentioned while a picture of (.+) was on screen\?$",
     ["What topic came up while an image of {0} was shown?", "While a photo of {0} was visible, what was talked about?",
      "Which subject was discussed as the screen showed {0}?"]),
    (r"^What was talked about while the screen was dark in (.+)\?$",
     ["In {0}, what was said while nothing could be seen?", "What did someone talk about during the dark part of {0}?"]),
    (r"^What could be heard while the picture was dark in (.+)\?$",
     ["In {0}, what sound was there while the screen was black?", "What could you hear during the dark stretch of {0}?"]),
    # which recording
    (r"^In which recording was (.+) mentioned\?$",
     ["Which of the recordings mentions {0}?", "Where was {0} mentioned?", "Name the recording in which {0} came up."]),
    (r"^Which camera showed (.+)\?$", ["On which of the cameras could {0} be seen?", "Which recording had a picture of {0}?"]),
    (r"^On which camera was the sign \"(.+)\" visible\?$",
     ["Which recording showed a sign reading \"{0}\"?", "In which of the recordings could the sign \"{0}\" be seen?"]),
    (r"^In which recording could (.+) be heard\?$", ["Which camera picked up {0}?", "Where could you hear {0}?"]),
    # counts
    (r"^How many times was (.+) mentioned in (.+)\?$",
     ["How often did someone mention {0} in {1}?", "In {1}, on how many occasions did {0} come up?"]),
    # sounds
    (r"^Besides people talking, what could you hear in (.+)\?$",
     ["Apart from the voices, what was audible in {0}?", "What else could be heard in {0}, other than speech?"]),
    (r"^Besides speech, what could be heard in the (.+) recording\?$",
     ["Other than people speaking, what sound was there in {0}?", "Aside from the talking, what could you hear in {0}?"]),
    (r"^Apart from people talking, which sound was in (.+)\?$",
     ["Besides the voices, what was heard in {0}?", "Which non-speech sound was in {0}?"]),
    # gist
    (r"^Name one person who was mentioned in the (.+) recording\.$",
     ["Who is one of the people talked about in {0}?", "Give the name of someone mentioned in {0}."]),
    (r"^What is the main subject of (.+)\?$", ["What is {0} mainly about?", "Summarise what {0} is about."]),
    (r"^What is the (.+) recording mostly about\?$", ["What is the main topic of {0}?", "Overall, what is {0} about?"]),
    # pictures
    (r"^What could be seen in a photo on screen in (.+)\?$", ["Which of these was pictured in {0}?", "In {0}, what did the photo show?"]),
    (r"^Which of these appeared in a picture in the (.+) recording\?$",
     ["What was shown in a photo in {0}?", "Which of these did a picture in {0} show?"]),
    # signs
    (r"^Until what time is it open, according to the sign in (.+)\?$",
     ["What closing time did the sign in {0} give?", "According to the sign shown in {0}, when does it close?"]),
    (r"^What number did the (\w+) sign in (.+) show\?$",
     ["Which {0} number was written on the sign in {1}?", "The {0} sign in {1} showed which number?"]),
    # what was said
    (r"^How much is an? (.+)\?$", ["What does a {0} cost?", "What is the price of a {0}?"]),
    (r"^What time does (.+) begin\?$", ["When does {0} start?", "At what time will {0} begin?"]),
    (r"^Which room is (.+) in\?$", ["In which room is {0}?", "What room number is {0} in?"]),
    (r"^Who is repairing the (.+)\?$", ["Who is fixing the {0}?", "Which person is repairing the {0}?"]),
    (r"^Where was the (.+) left by (\w+)\?$", ["Where did {1} leave the {0}?", "Where did {1} put the {0} down?"]),
    # a place asked with its preposition (added in session 41 with the rule that reads it)
    (r"^Where did (\w+) leave the (.+)\?$", ["Next to what did {0} leave the {1}?", "Beside what did {0} leave the {1}?"]),
    (r"^Where did (\w+) put the (.+)\?$", ["Near what did {0} put the {1}?", "By what did {0} put the {1} down?"]),
]

# Session 82: a second set of rewordings, written from the dev split's question wordings (and
# the dev-only other-sentence wordings) without reading the held-out ones again: casual forms,
# contractions, requests ("Tell me …") and the asked thing put first.
FRESH_REWORDINGS: list[tuple[str, list[str]]] = [
    # what was said: times
    (r"^(?:At what time is|When is) (\w+) meeting the (.+?)\?$",
     ["What's the time of {0}'s meeting with the {1}?", "Tell me when {0} meets the {1}."]),
    (r"^When does (\w+) meet the (.+)\?$", ["{0} meets the {1} at what time?", "When's {0} meeting the {1}?"]),
    (r"^When is (\w+)'s appointment with the (.+)\?$",
     ["What time is {0} booked in with the {1}?", "{0}'s appointment with the {1} is when?"]),
    (r"^What time does (\w+) see the (.+)\?$", ["When will {0} be seeing the {1}?", "At what hour does {0} see the {1}?"]),
    (r"^(?:When does|What time must) (\w+) (?:have to )?see the (.+)\?$",
     ["By what time does {0} need to see the {1}?", "When's {0} supposed to see the {1}?"]),
    (r"^(?:At what time are the (.+) and (\w+) getting together|When will (\w+) get together with the (.+))\?$",
     ["When do {1}{2} and the {0}{3} meet up?", "What time are {1}{2} and the {0}{3} meeting?"]),
    (r"^(?:When does|At what time does|What time does|When is) the (.+?) (?:start|begin|starting|get going|open)\?$",
     ["What's the start time of the {0}?", "The {0} kicks off at what time?", "Tell me when the {0} starts."]),
    (r"^What time is the (.+)\?$", ["When's the {0} happening?", "What's the time for the {0}?"]),
    # places
    (r"^Where (?:did (\w+) (?:leave|put|move) the (.+)|was the (.+) left by (\w+))\?$",
     ["Where can I find the {1}{2} that {0}{3} left?", "What's the location of {0}{3}'s {1}{2}?"]),
    (r"^Where is the (.+) that (\w+) put down\?$", ["Where's the {0} {1} put down?", "Where would I find {1}'s {0}?"]),
    (r"^Where does (\w+) keep the (.+)\?$", ["Where's the {1} kept by {0}?", "Where can the {1} be found?"]),
    (r"^At what place is the (.+) kept\?$", ["Where's the {0} kept?", "Where do they keep the {0}?"]),
    (r"^Where is the (.+) now\?$", ["Where has the {0} ended up?", "What's the {0}'s current spot?"]),
    # counts
    (r"^How many (.+) did (\w+) buy\?$", ["What's the number of {0} {1} bought?", "{1} bought how many {0}?"]),
    (r"^How many (.+) did (\w+) order\?$", ["What's the number of {0} {1} ordered?", "{1} ordered how many {0}?"]),
    (r"^What number of (.+) did (\w+) buy this morning\?$", ["How many {0} were bought by {1} this morning?",
                                                           "This morning {1} bought how many {0}?"]),
    (r"^How many (.+) were ordered by (\w+)\?$", ["How many {0} did {1} put in an order for?", "{1}'s order had how many {0}?"]),
    (r"^How many (.+) does (\w+) have\?$", ["What's the number of {0} {1} has?", "{1} has got how many {0}?"]),
    (r"^How many (.+) are in (\w+)'s bag\?$", ["What's the count of {0} in {1}'s bag?", "In {1}'s bag, how many {0} are there?"]),
    (r"^How many (.+) are left\?$", ["How many {0} remain?", "What's the number of {0} still left?"]),
    # prices
    (r"^(?:How much does|What does) (?:the|a) (.+?) cost(?: at the counter| here)?\?$",
     ["What's the {0}'s price?", "How much do I pay for the {0}?", "The {0} costs how much?"]),
    (r"^What is the (?:sale )?price of the (.+?)(?: today)?\?$", ["How much is the {0} going for?", "What does the {0} sell for?"]),
    (r"^How much is (?:an?|the) (.+?)(?: on sale for)?\?$", ["What's the cost of a {0}?", "Tell me the price of a {0}."]),
    (r"^For how much can you get a (.+)\?$", ["What's a {0} cost here?", "How much would a {0} set me back?"]),
    # people
    (r"^(?:Who is repairing|Which person is fixing) the (.+)\?$", ["Who's doing the repair on the {0}?", "Tell me who is repairing the {0}."]),
    (r"^Who (?:will clean|is cleaning) the (.+?)(?: after lunch)?\?$", ["Who's going to clean the {0}?", "The {0} will be cleaned by whom?"]),
    (r"^Who (?:looks after|takes care of) the (.+?)(?: these days)?\?$", ["Who's looking after the {0}?", "Who minds the {0}?"]),
    (r"^(?:Whom should you ask about|Who do you ask if you need) the (.+)\?$",
     ["If I need the {0}, who should I ask?", "Who's the person to ask for the {0}?"]),
    # rooms and colours
    (r"^(?:Which room is|In what room is|What room is) the (.+?) (?:in|in now)?\?$",
     ["What's the room number for the {0}?", "The {0} is in which room?"]),
    (r"^In what room is the (.+)\?$", ["Which room will the {0} be in?", "Where's the {0} held, which room?"]),
    (r"^Which room has the (.+) moved to\?$", ["The {0} moved to which room?", "What's the new room for the {0}?"]),
    (r"^What colour did (\w+) paint the (.+)\?$", ["{0} painted the {1} what colour?", "What's the colour of the {1} {0} painted?"]),
    (r"^Which colour is the (.+) that (\w+) painted\?$", ["What colour has {1} made the {0}?", "The {0} {1} painted is which colour?"]),
    (r"^(?:What colour does (\w+) want the (.+) to be|Which colour should (\w+)'s (.+) be)\?$",
     ["What colour is {0}{2} after for the {1}{3}?", "{0}{2} would like the {1}{3} in which colour?"]),
    # order
    (r"^What (?:was mentioned right after|came up next after) (.+)\?$",
     ["What did they talk about after {0}?", "Once {0} had been discussed, what was the next subject?"]),
    (r"^What was mentioned just before (.+)\?$",
     ["What topic came right before {0}?", "Before {0} came up, what was being discussed?"]),
    (r"^Which was mentioned first: (.+) or (.+)\?$", ["Did {0} or {1} come up first?", "Between {0} and {1}, which was said earlier?"]),
    # which stream
    (r"^(?:In which recording was (.+) mentioned|Which camera recorded the talk about (.+))\?$",
     ["Which camera's recording talks about {0}{1}?", "Where did someone talk about {0}{1}? Which stream?"]),
    (r"^Which camera showed (.+)\?$", ["In which stream could you see {0}?", "{0} appeared on which camera?"]),
    (r"^On which camera was the sign (\".+\") visible\?$", ["Which stream had a sign reading {0}?", "The sign {0} was on which camera?"]),
    (r"^In which recording could (.+) be heard\?$", ["Which stream had {0} in it?", "Where could you hear {0}: which camera?"]),
    # how many times
    (r"^How many times was the (.+) mentioned in (.+)\?$",
     ["How often does the {0} come up in {1}?", "Count the mentions of the {0} in {1}."]),
    # sounds
    (r"^(?:Besides people talking, what could you hear|Besides speech, what could be heard|Apart from people talking, which sound was) in (?:the )?(.+?)(?: recording)?\?$",
     ["What non-voice sound was in {0}?", "Other than talking, was there any sound in {0}? Which?"]),
    # pictures
    (r"^In the (.+) recording a picture was shown that nobody talked about\. What did it show\?$",
     ["What was in the photo shown in {0}?", "Describe the picture that appeared in {0}."]),
    (r"^(?:Which of these appeared in a picture in the (.+) recording|What could be seen in a photo on screen in (.+))\?$",
     ["Which one of these could you see in a photo in {0}{1}?", "A photo in {0}{1} showed which of these?"]),
    (r"^What picture was on screen while someone talked about (.+)\?$",
     ["When {0} was discussed, which image was on screen?", "What was pictured during the talk about {0}?"]),
    (r"^What was mentioned while a picture of (.+) was on screen\?$",
     ["What did people talk about as the picture of {0} was showing?", "With {0} pictured on screen, what was said?"]),
    (r"^What could be heard while the picture was dark in (.+)\?$",
     ["During the dark part of {0}, what did you hear?", "What sound played when {0} went black?"]),
    (r"^What was talked about while the screen was dark in (.+)\?$",
     ["What did someone say when {0} went black?", "While {0} showed nothing but darkness, what was discussed?"]),
    # signs
    (r"^(?:Which (\w+) number was shown on a sign in|What number did the (\w+) sign in) (.+?)(?: show)?\?$",
     ["What {0}{1} number was on the sign in {2}?", "The sign in {2} gave which {0}{1} number?"]),
    (r"^According to the sign in (.+), on which day is it closed\?$",
     ["What day is it closed, per the sign in {0}?", "The sign in {0} says it's shut on which day?"]),
    (r"^Until what time is it open, according to the sign in (.+)\?$",
     ["When does it close according to the sign in {0}?", "The sign in {0} says it's open till when?"]),
    # gist
    (r"^(?:What is the (.+) recording mostly about|What is the main subject of (.+))\?$",
     ["What goes on in {0}{1}?", "In a few words, what is {0}{1} about?"]),
    (r"^Name one person who was mentioned in the (.+) recording\.$",
     ["Who gets a mention in {0}?", "Give me one name that comes up in {0}."]),
]
# Session 82's check: a third set, one wording each, written after the rules that session 82's
# set guided were in place and never used to change them: how those rules fare on wordings
# they were not written from.
CHECK_REWORDINGS: list[tuple[str, list[str]]] = [
    (r"^(?:At what time is|When is) (\w+) meeting the (.+?)\?$", ["Do you remember what time {0} meets the {1}?"]),
    (r"^When does (\w+) meet the (.+)\?$", ["At what point in the day does {0} meet the {1}?"]),
    (r"^When is (\w+)'s appointment with the (.+)\?$", ["I need the time of {0}'s appointment with the {1}."]),
    (r"^What time does (\w+) see the (.+)\?$", ["{0} sees the {1} when exactly?"]),
    (r"^(?:When does|What time must) (\w+) (?:have to )?see the (.+)\?$", ["What's the latest {0} can see the {1}?"]),
    (r"^(?:When does|At what time does|What time does|When is) the (.+?) (?:start|begin|starting|get going|open)\?$",
     ["So the {0}, what time is that?"]),
    (r"^Where (?:did (\w+) (?:leave|put|move) the (.+)|was the (.+) left by (\w+))\?$",
     ["Any idea where {0}{3} left the {1}{2}?"]),
    (r"^Where does (\w+) keep the (.+)\?$", ["Where would {0} have the {1}?"]),
    (r"^How many (.+) did (\w+) (?:buy|order)\?$", ["What was the number of {0} for {1}?"]),
    (r"^How many (.+) (?:does (\w+) have|are in (\w+)'s bag)\?$", ["Do you know how many {0} {1}{2} has got?"]),
    (r"^(?:How much does|What does) (?:the|a) (.+?) cost(?: at the counter| here)?\?$", ["Is the {0} expensive? How much?"]),
    (r"^What is the (?:sale )?price of the (.+?)(?: today)?\?$", ["Price of the {0}?"]),
    (r"^(?:Who is repairing|Which person is fixing) the (.+)\?$", ["Whose job is it to repair the {0}?"]),
    (r"^Who (?:will clean|is cleaning) the (.+?)(?: after lunch)?\?$", ["Who has to clean the {0}?"]),
    (r"^Who (?:looks after|takes care of) the (.+?)(?: these days)?\?$", ["Who is responsible for the {0}?"]),
    (r"^(?:Which room is|In what room is|What room is) the (.+?) (?:in|in now)?\?$", ["Room number for the {0}, please."]),
    (r"^What colour did (\w+) paint the (.+)\?$", ["The {1} {0} painted, what colour is it?"]),
    (r"^What (?:was mentioned right after|came up next after) (.+)\?$", ["And after {0}, what did they move on to?"]),
    (r"^What was mentioned just before (.+)\?$", ["What were they talking about before they got to {0}?"]),
    (r"^Which was mentioned first: (.+) or (.+)\?$", ["{0} or {1}: which one came up sooner?"]),
    (r"^(?:In which recording was (.+) mentioned|Which camera recorded the talk about (.+))\?$", ["{0}{1}: which camera was that on?"]),
    (r"^How many times was the (.+) mentioned in (.+)\?$", ["In {1}, how many mentions of the {0} were there?"]),
    (r"^(?:Besides people talking, what could you hear|Besides speech, what could be heard|Apart from people talking, which sound was) in (?:the )?(.+?)(?: recording)?\?$",
     ["Ignoring the voices, what else was audible in {0}?"]),
    (r"^What was talked about while the screen was dark in (.+)\?$", ["In {0}, when the image went black, what were they saying?"]),
    (r"^What picture was on screen while someone talked about (.+)\?$", ["Which photo went with the talk about {0}?"]),
    (r"^(?:What is the (.+) recording mostly about|What is the main subject of (.+))\?$", ["Give me the gist of {0}{1}."]),
    (r"^Name one person who was mentioned in the (.+) recording\.$", ["Which names did you hear in {0}?"]),
    (r"^Until what time is it open, according to the sign in (.+)\?$", ["Closing time on the sign in {0}?"]),
]
# Session 83's check: a fourth set, one wording each, written at the start of session 83
# before any rule of that session was changed, and never used to change one: its before/after
# figures say how that session's changes carry to wordings nobody wrote rules from.
CHECK83_REWORDINGS: list[tuple[str, list[str]]] = [
    (r"^(?:At what time is|When is) (\w+) meeting the (.+?)\?$", ["Remind me, when's the meeting between {0} and the {1}?"]),
    (r"^When does (\w+) meet the (.+)\?$", ["What time did they say {0} meets the {1}?"]),
    (r"^When is (\w+)'s appointment with the (.+)\?$", ["{0} has an appointment with the {1} - at what time?"]),
    (r"^What time does (\w+) see the (.+)\?$", ["What hour is {0} seeing the {1}?"]),
    (r"^(?:When does|What time must) (\w+) (?:have to )?see the (.+)\?$", ["{0} must see the {1} by when?"]),
    (r"^(?:At what time are the (.+) and (\w+) getting together|When will (\w+) get together with the (.+))\?$",
     ["When are {1}{2} and the {0}{3} supposed to meet?"]),
    (r"^(?:When does|At what time does|What time does|When is) the (.+?) (?:start|begin|starting|get going|open)\?$",
     ["What time should I turn up for the {0}?"]),
    (r"^What time is the (.+)\?$", ["When do they hold the {0}?"]),
    (r"^Where (?:did (\w+) (?:leave|put|move) the (.+)|was the (.+) left by (\w+))\?$", ["{0}{3} left the {1}{2} where?"]),
    (r"^Where is the (.+) that (\w+) put down\?$", ["Where did {1} set the {0} down?"]),
    (r"^Where does (\w+) keep the (.+)\?$", ["Where is {0}'s {1} usually kept?"]),
    (r"^At what place is the (.+) kept\?$", ["Where would I look for the {0}?"]),
    (r"^Where is the (.+) now\?$", ["Where is the {0} at the moment?"]),
    (r"^How many (.+) did (\w+) buy\?$", ["Number of {0} {1} bought?"]),
    (r"^How many (.+) did (\w+) order\?$", ["How many {0} were in {1}'s order?"]),
    (r"^What number of (.+) did (\w+) buy this morning\?$", ["How many {0} did {1} pick up this morning?"]),
    (r"^How many (.+) were ordered by (\w+)\?$", ["{1} placed an order for how many {0}?"]),
    (r"^How many (.+) does (\w+) have\?$", ["How many {0} belong to {1}?"]),
    (r"^How many (.+) are in (\w+)'s bag\?$", ["{1}'s bag holds how many {0}?"]),
    (r"^How many (.+) are left\?$", ["How many {0} are still there?"]),
    (r"^(?:How much does|What does) (?:the|a) (.+?) cost(?: at the counter| here)?\?$", ["What would I pay for the {0}?"]),
    (r"^What is the (?:sale )?price of the (.+?)(?: today)?\?$", ["What's the {0} priced at?"]),
    (r"^How much is (?:an?|the) (.+?)(?: on sale for)?\?$", ["What do they charge for a {0}?"]),
    (r"^For how much can you get a (.+)\?$", ["A {0} costs what?"]),
    (r"^(?:Who is repairing|Which person is fixing) the (.+)\?$", ["Who's fixing the {0}?"]),
    (r"^Who (?:will clean|is cleaning) the (.+?)(?: after lunch)?\?$", ["Whose job is cleaning the {0}?"]),
    (r"^Who (?:looks after|takes care of) the (.+?)(?: these days)?\?$", ["Who is in charge of the {0}?"]),
    (r"^(?:Whom should you ask about|Who do you ask if you need) the (.+)\?$", ["Who can help me with the {0}?"]),
    (r"^(?:Which room is|In what room is|What room is) the (.+?) (?:in|in now)?\?$", ["What room do I go to for the {0}?"]),
    (r"^In what room is the (.+)\?$", ["The {0}: what room?"]),
    (r"^Which room has the (.+) moved to\?$", ["Where did the {0} move to?"]),
    (r"^What colour did (\w+) paint the (.+)\?$", ["What colour is the {1} now that {0} painted it?"]),
    (r"^Which colour is the (.+) that (\w+) painted\?$", ["Tell me the colour {1} painted the {0}."]),
    (r"^(?:What colour does (\w+) want the (.+) to be|Which colour should (\w+)'s (.+) be)\?$",
     ["Which colour would {0}{2} like for the {1}{3}?"]),
    (r"^What (?:was mentioned right after|came up next after) (.+)\?$", ["What did they bring up after {0}?"]),
    (r"^What was mentioned just before (.+)\?$", ["What came just ahead of {0}?"]),
    (r"^Which was mentioned first: (.+) or (.+)\?$", ["Which got mentioned earlier - {0} or {1}?"]),
    (r"^(?:In which recording was (.+) mentioned|Which camera recorded the talk about (.+))\?$",
     ["Which feed had the conversation about {0}{1}?"]),
    (r"^Which camera showed (.+)\?$", ["Where did we see {0}? Which camera?"]),
    (r"^On which camera was the sign (\".+\") visible\?$", ["Which camera had the {0} sign in view?"]),
    (r"^In which recording could (.+) be heard\?$", ["On which recording do you hear {0}?"]),
    (r"^How many times was the (.+) mentioned in (.+)\?$", ["Number of times the {0} was mentioned in {1}?"]),
    (r"^(?:Besides people talking, what could you hear|Besides speech, what could be heard|Apart from people talking, which sound was) in (?:the )?(.+?)(?: recording)?\?$",
     ["Apart from speech, what did the microphone pick up in {0}?"]),
    (r"^In the (.+) recording a picture was shown that nobody talked about\. What did it show\?$",
     ["Nobody talked about the picture in {0}; what was in it?"]),
    (r"^(?:Which of these appeared in a picture in the (.+) recording|What could be seen in a photo on screen in (.+))\?$",
     ["Which of these showed up in a photo in {0}{1}?"]),
    (r"^What picture was on screen while someone talked about (.+)\?$", ["While they were talking about {0}, what was on the screen?"]),
    (r"^What was mentioned while a picture of (.+) was on screen\?$", ["What did someone say while {0} was on the screen?"]),
    (r"^What could be heard while the picture was dark in (.+)\?$", ["What was audible while {0} was blacked out?"]),
    (r"^What was talked about while the screen was dark in (.+)\?$", ["When {0} had no picture, what did people talk about?"]),
    (r"^(?:Which (\w+) number was shown on a sign in|What number did the (\w+) sign in) (.+?)(?: show)?\?$",
     ["Which {0}{1} number could be read on the sign in {2}?"]),
    (r"^According to the sign in (.+), on which day is it closed\?$", ["Which day is it shut, going by the sign in {0}?"]),
    (r"^Until what time is it open, according to the sign in (.+)\?$", ["How late is it open, judging by the sign in {0}?"]),
    (r"^(?:What is the (.+) recording mostly about|What is the main subject of (.+))\?$", ["Sum up {0}{1} for me."]),
    (r"^Name one person who was mentioned in the (.+) recording\.$", ["Who was named in {0}?"]),
]
# Session 84's check: a fifth set, one wording each, written at the start of session 84 before
# any rule of that session was changed, and never used to change one. It asks in styles the
# earlier sets do not: statements that embed the question ("I'm trying to remember when …"),
# polite frames ("Could you tell me …", "Do you happen to know …"), lower case with no question
# mark, American spelling, a question put after a statement ("… ? No one mentioned it.").
CHECK84_REWORDINGS: list[tuple[str, list[str]]] = [
    (r"^(?:At what time is|When is) (\w+) meeting the (.+?)\?$", ["I'm trying to remember when {0} is meeting the {1}."]),
    (r"^When does (\w+) meet the (.+)\?$", ["Could you tell me when {0} meets the {1}?"]),
    (r"^When is (\w+)'s appointment with the (.+)\?$", ["what time's {0}'s appointment with the {1}"]),
    (r"^What time does (\w+) see the (.+)\?$", ["Do you happen to know at what time {0} sees the {1}?"]),
    (r"^(?:When does|What time must) (\w+) (?:have to )?see the (.+)\?$", ["By what time does {0} need to see the {1}?"]),
    (r"^(?:At what time are the (.+) and (\w+) getting together|When will (\w+) get together with the (.+))\?$", ["What's the time of the get-together between {1}{2} and the {0}{3}?"]),
    (r"^(?:When does|At what time does|What time does|When is) the (.+?) (?:start|begin|starting|get going|open)\?$", ["When's the {0} kicking off?"]),
    (r"^What time is the (.+)\?$", ["I'd like to know the time of the {0}."]),
    (r"^Where (?:did (\w+) (?:leave|put|move) the (.+)|was the (.+) left by (\w+))\?$", ["Where'd {0}{3} leave the {1}{2}?"]),
    (r"^Where is the (.+) that (\w+) put down\?$", ["Can you remind me where {1} put the {0} down?"]),
    (r"^Where does (\w+) keep the (.+)\?$", ["What's the usual spot for {0}'s {1}?"]),
    (r"^At what place is the (.+) kept\?$", ["The {0} - where is it kept?"]),
    (r"^Where is the (.+) now\?$", ["where's the {0} now"]),
    (r"^How many (.+) did (\w+) buy\?$", ["Do you know how many {0} {1} bought?"]),
    (r"^How many (.+) did (\w+) order\?$", ["What quantity of {0} did {1} order?"]),
    (r"^What number of (.+) did (\w+) buy this morning\?$", ["How many {0} did {1} get this morning?"]),
    (r"^How many (.+) were ordered by (\w+)\?$", ["How many {0} has {1} ordered?"]),
    (r"^How many (.+) does (\w+) have\?$", ["What's the number of {0} that {1} has?"]),
    (r"^How many (.+) are in (\w+)'s bag\?$", ["How many {0} has {1} got in the bag?"]),
    (r"^How many (.+) are left\?$", ["how many {0} remain"]),
    (r"^(?:How much does|What does) (?:the|a) (.+?) cost(?: at the counter| here)?\?$", ["How much money is the {0}?"]),
    (r"^What is the (?:sale )?price of the (.+?)(?: today)?\?$", ["Could you tell me what the {0} costs?"]),
    (r"^How much is (?:an?|the) (.+?)(?: on sale for)?\?$", ["What's the going rate for a {0}?"]),
    (r"^For how much can you get a (.+)\?$", ["What price is a {0} going for?"]),
    (r"^(?:Who is repairing|Which person is fixing) the (.+)\?$", ["Who's the one repairing the {0}?"]),
    (r"^Who (?:will clean|is cleaning) the (.+?)(?: after lunch)?\?$", ["Who's going to clean the {0}?"]),
    (r"^Who (?:looks after|takes care of) the (.+?)(?: these days)?\?$", ["The {0} is looked after by whom?"]),
    (r"^(?:Whom should you ask about|Who do you ask if you need) the (.+)\?$", ["If I need the {0}, who should I talk to?"]),
    (r"^(?:Which room is|In what room is|What room is) the (.+?) (?:in|in now)?\?$", ["Which room will the {0} be held in?"]),
    (r"^In what room is the (.+)\?$", ["I'm looking for the {0}. Which room?"]),
    (r"^Which room has the (.+) moved to\?$", ["What's the new room for the {0}?"]),
    (r"^What colour did (\w+) paint the (.+)\?$", ["What color did {0} paint the {1}?"]),
    (r"^Which colour is the (.+) that (\w+) painted\?$", ["{1} painted the {0} - in which colour?"]),
    (r"^(?:What colour does (\w+) want the (.+) to be|Which colour should (\w+)'s (.+) be)\?$", ["What colour is {0}{2} hoping the {1}{3} will be?"]),
    (r"^What (?:was mentioned right after|came up next after) (.+)\?$", ["What followed {0}?"]),
    (r"^What was mentioned just before (.+)\?$", ["What was the topic right before {0}?"]),
    (r"^Which was mentioned first: (.+) or (.+)\?$", ["Was {0} mentioned before {1}, or the other way round?"]),
    (r"^(?:In which recording was (.+) mentioned|Which camera recorded the talk about (.+))\?$", ["Which recording has someone talking about {0}{1}?"]),
    (r"^Which camera showed (.+)\?$", ["{0} was seen on which camera?"]),
    (r"^On which camera was the sign (\".+\") visible\?$", ["Which camera could see a sign saying {0}?"]),
    (r"^In which recording could (.+) be heard\?$", ["Which stream has {0} in the background?"]),
    (r"^How many times was the (.+) mentioned in (.+)\?$", ["How frequently does the {0} come up in {1}?"]),
    (r"^(?:Besides people talking, what could you hear|Besides speech, what could be heard|Apart from people talking, which sound was) in (?:the )?(.+?)(?: recording)?\?$", ["What non-speech sounds are there in {0}?"]),
    (r"^In the (.+) recording a picture was shown that nobody talked about\. What did it show\?$", ["What did the picture in {0} show? No one mentioned it."]),
    (r"^(?:Which of these appeared in a picture in the (.+) recording|What could be seen in a photo on screen in (.+))\?$", ["Which of these could you see in a picture in {0}{1}?"]),
    (r"^What picture was on screen while someone talked about (.+)\?$", ["What image accompanied the discussion of {0}?"]),
    (r"^What was mentioned while a picture of (.+) was on screen\?$", ["When the picture of {0} was up, what was being said?"]),
    (r"^What could be heard while the picture was dark in (.+)\?$", ["What sounds were there when the screen of {0} went dark?"]),
    (r"^What was talked about while the screen was dark in (.+)\?$", ["What was being discussed while {0} showed nothing?"]),
    (r"^(?:Which (\w+) number was shown on a sign in|What number did the (\w+) sign in) (.+?)(?: show)?\?$", ["What {0}{1} number does the sign in {2} give?"]),
    (r"^According to the sign in (.+), on which day is it closed\?$", ["On what day does the sign in {0} say it's closed?"]),
    (r"^Until what time is it open, according to the sign in (.+)\?$", ["What's the closing time written on the sign in {0}?"]),
    (r"^(?:What is the (.+) recording mostly about|What is the main subject of (.+))\?$", ["What happens in {0}{1}, in short?"]),
    (r"^Name one person who was mentioned in the (.+) recording\.$", ["Can you name someone mentioned in {0}?"]),
]
# Session 84's blind check: a sixth set in the styles of session 84's check but in other words,
# written after that session's rules and before it was first asked, never used to change one:
# how those rules carry to wordings they were not written from.
BLIND84_REWORDINGS: list[tuple[str, list[str]]] = [
    (r"^(?:At what time is|When is) (\w+) meeting the (.+?)\?$", ["Just wondering when {0} is meeting the {1}?"]),
    (r"^When does (\w+) meet the (.+)\?$", ["hey, when does {0} meet the {1}"]),
    (r"^When is (\w+)'s appointment with the (.+)\?$", ["Could you remind me of the time of {0}'s appointment with the {1}?"]),
    (r"^What time does (\w+) see the (.+)\?$", ["I don't remember what time {0} sees the {1}."]),
    (r"^(?:When does|What time must) (\w+) (?:have to )?see the (.+)\?$", ["By when must {0} see the {1}?"]),
    (r"^(?:At what time are the (.+) and (\w+) getting together|When will (\w+) get together with the (.+))\?$", ["Any chance you know when {1}{2} and the {0}{3} get together?"]),
    (r"^(?:When does|At what time does|What time does|When is) the (.+?) (?:start|begin|starting|get going|open)\?$", ["do you know when the {0} starts"]),
    (r"^What time is the (.+)\?$", ["Can you check what time the {0} is?"]),
    (r"^Where (?:did (\w+) (?:leave|put|move) the (.+)|was the (.+) left by (\w+))\?$", ["I was wondering where {0}{3} left the {1}{2}."]),
    (r"^Where is the (.+) that (\w+) put down\?$", ["Where exactly did {1} put the {0} down?"]),
    (r"^Where does (\w+) keep the (.+)\?$", ["Where does {0} usually keep the {1}?"]),
    (r"^At what place is the (.+) kept\?$", ["Tell me where the {0} is kept, please."]),
    (r"^Where is the (.+) now\?$", ["Where can I find the {0} now?"]),
    (r"^How many (.+) did (\w+) buy\?$", ["How many {0} did {1} end up buying?"]),
    (r"^How many (.+) did (\w+) order\?$", ["I'd like to know how many {0} {1} ordered."]),
    (r"^What number of (.+) did (\w+) buy this morning\?$", ["how many {0} did {1} buy this morning"]),
    (r"^How many (.+) were ordered by (\w+)\?$", ["Do you remember how many {0} {1} ordered?"]),
    (r"^How many (.+) does (\w+) have\?$", ["Could you tell me how many {0} {1} has?"]),
    (r"^How many (.+) are in (\w+)'s bag\?$", ["What's the count of {0} in {1}'s bag?"]),
    (r"^How many (.+) are left\?$", ["Are there any {0} left? How many?"]),
    (r"^(?:How much does|What does) (?:the|a) (.+?) cost(?: at the counter| here)?\?$", ["Can you tell me the price of the {0}?"]),
    (r"^What is the (?:sale )?price of the (.+?)(?: today)?\?$", ["How much are they asking for the {0}?"]),
    (r"^How much is (?:an?|the) (.+?)(?: on sale for)?\?$", ["what does a {0} cost"]),
    (r"^For how much can you get a (.+)\?$", ["I forgot how much a {0} costs."]),
    (r"^(?:Who is repairing|Which person is fixing) the (.+)\?$", ["Do you know who is repairing the {0}?"]),
    (r"^Who (?:will clean|is cleaning) the (.+?)(?: after lunch)?\?$", ["Who was going to clean the {0}?"]),
    (r"^Who (?:looks after|takes care of) the (.+?)(?: these days)?\?$", ["who looks after the {0}"]),
    (r"^(?:Whom should you ask about|Who do you ask if you need) the (.+)\?$", ["Who's the person to ask about the {0}?"]),
    (r"^(?:Which room is|In what room is|What room is) the (.+?) (?:in|in now)?\?$", ["Do you remember which room the {0} is in?"]),
    (r"^In what room is the (.+)\?$", ["Where is the {0} being held - which room?"]),
    (r"^Which room has the (.+) moved to\?$", ["What room is the {0} in now?"]),
    (r"^What colour did (\w+) paint the (.+)\?$", ["I can't remember what color {0} painted the {1}."]),
    (r"^Which colour is the (.+) that (\w+) painted\?$", ["What colour has {1} painted the {0}?"]),
    (r"^(?:What colour does (\w+) want the (.+) to be|Which colour should (\w+)'s (.+) be)\?$", ["Which colour did {0}{2} want for the {1}{3}?"]),
    (r"^What (?:was mentioned right after|came up next after) (.+)\?$", ["What was said after {0}?"]),
    (r"^What was mentioned just before (.+)\?$", ["Before {0}, what did they talk about?"]),
    (r"^Which was mentioned first: (.+) or (.+)\?$", ["Did {0} come up before {1}, or was it the other way around?"]),
    (r"^(?:In which recording was (.+) mentioned|Which camera recorded the talk about (.+))\?$", ["Do you know which recording mentions {0}{1}?"]),
    (r"^Which camera showed (.+)\?$", ["I saw {0} somewhere - which camera was it?"]),
    (r"^On which camera was the sign (\".+\") visible\?$", ["Where did I see the sign {0}? Which camera?"]),
    (r"^In which recording could (.+) be heard\?$", ["In which recording is there {0}?"]),
    (r"^How many times was the (.+) mentioned in (.+)\?$", ["How many times does the {0} get mentioned in {1}?"]),
    (r"^(?:Besides people talking, what could you hear|Besides speech, what could be heard|Apart from people talking, which sound was) in (?:the )?(.+?)(?: recording)?\?$", ["apart from the talking, what could you hear in {0}"]),
    (r"^In the (.+) recording a picture was shown that nobody talked about\. What did it show\?$", ["What's the picture in {0} that nobody talks about?"]),
    (r"^(?:Which of these appeared in a picture in the (.+) recording|What could be seen in a photo on screen in (.+))\?$", ["Could you see any of these in a photo in {0}{1}?"]),
    (r"^What picture was on screen while someone talked about (.+)\?$", ["What was on the screen during the talk about {0}?"]),
    (r"^What was mentioned while a picture of (.+) was on screen\?$", ["What were people saying while there was a picture of {0} on screen?"]),
    (r"^What could be heard while the picture was dark in (.+)\?$", ["What could you hear in {0} when the picture went black?"]),
    (r"^What was talked about while the screen was dark in (.+)\?$", ["What did people say in {0} while the screen was blank?"]),
    (r"^(?:Which (\w+) number was shown on a sign in|What number did the (\w+) sign in) (.+?)(?: show)?\?$", ["What's the {0}{1} number on the sign in {2}?"]),
    (r"^According to the sign in (.+), on which day is it closed\?$", ["Which day does the sign in {0} say it's closed?"]),
    (r"^Until what time is it open, according to the sign in (.+)\?$", ["When does it close, going by the sign in {0}?"]),
    (r"^(?:What is the (.+) recording mostly about|What is the main subject of (.+))\?$", ["Can you summarise {0}{1}?"]),
    (r"^Name one person who was mentioned in the (.+) recording\.$", ["Who gets mentioned in {0}?"]),
]
# Session 85's check: a seventh set, one wording each, written at the start of session 85 before
# any rule it measures was changed, and never used to change one. It asks in styles the earlier
# sets do not: the thing asked about held by its owner ("Leila's car jack", "Where is Tom's
# umbrella?"), counted by a number ("one onion"), and fact questions that carry a time of day
# ("… today", "… this morning", "tonight") without asking what happened then.
CHECK85_REWORDINGS: list[tuple[str, list[str]]] = [
    (r"^(?:At what time is|When is) (\w+) meeting the (.+?)\?$", ["When is {0}'s meeting with the {1} today?"]),
    (r"^When does (\w+) meet the (.+)\?$", ["{0}'s meeting with the {1}: what time is it today?"]),
    (r"^When is (\w+)'s appointment with the (.+)\?$", ["At what time is {0}'s appointment with the {1} today?"]),
    (r"^What time does (\w+) see the (.+)\?$", ["When will {0} see the {1} today?"]),
    (r"^(?:When does|What time must) (\w+) (?:have to )?see the (.+)\?$", ["What time is {0}'s visit to the {1}?"]),
    (r"^(?:At what time are the (.+) and (\w+) getting together|When will (\w+) get together with the (.+))\?$", ["When is {1}{2}'s get-together with the {0}{3} today?"]),
    (r"^(?:When does|At what time does|What time does|When is) the (.+?) (?:start|begin|starting|get going|open)\?$", ["What time does today's {0} start?"]),
    (r"^What time is the (.+)\?$", ["When is the {0} tonight?"]),
    (r"^Where (?:did (\w+) (?:leave|put|move) the (.+)|was the (.+) left by (\w+))\?$", ["Next to what is {0}{3}'s {1}{2}?"]),
    (r"^Where is the (.+) that (\w+) put down\?$", ["Where's {1}'s {0} at the moment?"]),
    (r"^Where does (\w+) keep the (.+)\?$", ["Where is {0}'s {1} kept?"]),
    (r"^At what place is the (.+) kept\?$", ["Where's the {0} kept these days?"]),
    (r"^Where is the (.+) now\?$", ["Where is the {0} right now?"]),
    (r"^How many (.+) did (\w+) buy\?$", ["How many {0} did {1} buy today?"]),
    (r"^How many (.+) did (\w+) order\?$", ["How many {0} are in {1}'s order?"]),
    (r"^What number of (.+) did (\w+) buy this morning\?$", ["What was the number of {0} {1} bought this morning?"]),
    (r"^How many (.+) were ordered by (\w+)\?$", ["{1}'s order had how many {0}?"]),
    (r"^How many (.+) does (\w+) have\?$", ["How many {0} has {1} got today?"]),
    (r"^How many (.+) are in (\w+)'s bag\?$", ["In {1}'s bag, how many {0} are there?"]),
    (r"^How many (.+) are left\?$", ["How many {0} are still left today?"]),
    (r"^(?:How much does|What does) (?:the|a) (.+?) cost(?: at the counter| here)?\?$", ["How much for one {0}?"]),
    (r"^What is the (?:sale )?price of the (.+?)(?: today)?\?$", ["What does one {0} cost today?"]),
    (r"^How much is (?:an?|the) (.+?)(?: on sale for)?\?$", ["How much do they want for one {0}?"]),
    (r"^For how much can you get a (.+)\?$", ["What's one {0} selling for?"]),
    (r"^(?:Who is repairing|Which person is fixing) the (.+)\?$", ["Who is repairing the {0} today?"]),
    (r"^Who (?:will clean|is cleaning) the (.+?)(?: after lunch)?\?$", ["Who's responsible for cleaning the {0} this afternoon?"]),
    (r"^Who (?:looks after|takes care of) the (.+?)(?: these days)?\?$", ["Who is in charge of the {0} at the moment?"]),
    (r"^(?:Whom should you ask about|Who do you ask if you need) the (.+)\?$", ["Who's the go-to person for the {0} today?"]),
    (r"^(?:Which room is|In what room is|What room is) the (.+?) (?:in|in now)?\?$", ["Which room is today's {0} in?"]),
    (r"^In what room is the (.+)\?$", ["The {0} tonight is in which room?"]),
    (r"^Which room has the (.+) moved to\?$", ["Today's {0} has moved: to which room?"]),
    (r"^What colour did (\w+) paint the (.+)\?$", ["What colour is {0}'s {1} now?"]),
    (r"^Which colour is the (.+) that (\w+) painted\?$", ["{1}'s {0}: which colour was it painted?"]),
    (r"^(?:What colour does (\w+) want the (.+) to be|Which colour should (\w+)'s (.+) be)\?$", ["Which colour is wanted for {0}{2}'s {1}{3}?"]),
    (r"^What (?:was mentioned right after|came up next after) (.+)\?$", ["Today, what was mentioned right after {0}?"]),
    (r"^What was mentioned just before (.+)\?$", ["Earlier today, what came just before {0}?"]),
    (r"^Which was mentioned first: (.+) or (.+)\?$", ["Which came first this morning: {0} or {1}?"]),
    (r"^(?:In which recording was (.+) mentioned|Which camera recorded the talk about (.+))\?$", ["Which recording talked about {0}{1} today?"]),
    (r"^Which camera showed (.+)\?$", ["Which camera had {0} on it today?"]),
    (r"^On which camera was the sign (\".+\") visible\?$", ["On which camera was the sign {0} up today?"]),
    (r"^In which recording could (.+) be heard\?$", ["Which recording picked up {0} this morning?"]),
    (r"^How many times was the (.+) mentioned in (.+)\?$", ["How many times today was the {0} mentioned in {1}?"]),
    (r"^(?:Besides people talking, what could you hear|Besides speech, what could be heard|Apart from people talking, which sound was) in (?:the )?(.+?)(?: recording)?\?$", ["What sounds besides speech were there in {0} today?"]),
    (r"^In the (.+) recording a picture was shown that nobody talked about\. What did it show\?$", ["In {0}'s recording, what did the picture nobody mentioned show?"]),
    (r"^(?:Which of these appeared in a picture in the (.+) recording|What could be seen in a photo on screen in (.+))\?$", ["Which of these appeared in {0}{1}'s picture?"]),
    (r"^What picture was on screen while someone talked about (.+)\?$", ["What was on the screen today while someone discussed {0}?"]),
    (r"^What was mentioned while a picture of (.+) was on screen\?$", ["While the picture of {0} was up today, what was said?"]),
    (r"^What could be heard while the picture was dark in (.+)\?$", ["What did {0}'s sound have while its picture was dark?"]),
    (r"^What was talked about while the screen was dark in (.+)\?$", ["What was discussed in {0} while its screen was dark?"]),
    (r"^(?:Which (\w+) number was shown on a sign in|What number did the (\w+) sign in) (.+?)(?: show)?\?$", ["What {0}{1} number was on {2}'s sign?"]),
    (r"^According to the sign in (.+), on which day is it closed\?$", ["Which day is it closed, according to {0}'s sign?"]),
    (r"^Until what time is it open, according to the sign in (.+)\?$", ["What time does it close today, going by the sign in {0}?"]),
    (r"^(?:What is the (.+) recording mostly about|What is the main subject of (.+))\?$", ["What is {0}{1}'s recording about today?"]),
    (r"^Name one person who was mentioned in the (.+) recording\.$", ["Name someone who was talked about in {0} today."]),
]
TABLES = {"session19": REWORDINGS, "session82": FRESH_REWORDINGS, "session82-check": CHECK_REWORDINGS,
          "session83-check": CHECK83_REWORDINGS,
          "session84-check": CHECK84_REWORDINGS, "session84-blind": BLIND84_REWORDINGS,
          "session85-check": CHECK85_REWORDINGS}


def reword(question: str, n: int, table: list[tuple[str, list[str]]] = REWORDINGS) -> str | None:
    """Rewording ``n`` (mod the template's count) of ``question``, or None for no template."""
    for pattern, outs in table:
        m = re.match(pattern, question)
        if m:
            # a pattern with alternatives leaves the other branch's groups empty
            return outs[n % len(outs)].format(*(g or "" for g in m.groups()))
    return None


def reworded(qa_set: QASet, table: str = "session19") -> QASet:
    """The answerable questions of ``qa_set`` that a template of ``table`` (:data:`TABLES`)
    rewords, reworded; no moments."""
    items = []
    for item in qa_set.items:
        if not item.answerable:
            continue
        question = reword(item.question, len(items), TABLES[table])
        if question is not None:
            items.append(replace(item, id="r" + item.id, question=question))
    return replace(qa_set, items=items, moments=[], name=f"{qa_set.name} reworded ({table})")
